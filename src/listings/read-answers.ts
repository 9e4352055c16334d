import { hash } from 'node:crypto';
import type { MirrorState } from '../catalog-sync/catalog-mirror.types';
import { freshness, isStale, type Freshness } from './listing.mapper';
import type { MirrorStateTracker } from './mirror-state.tracker';
import type { ReadApiSettings } from './read-api.settings';
import { ResponseCache, type RenderedBody } from './response-cache';

/** What a render sees: one state and one clock reading for the whole answer. */
export interface RenderContext {
  state: MirrorState;
  events: Freshness;
  listings: Freshness;
}

/** A strong validator of the exact body bytes (equal bodies on every replica get equal tags). */
export function etagOf(body: string): string {
  // One-shot digest: no Hash object per answer.
  return `"${hash('sha256', body, 'base64url').slice(0, 32)}"`;
}

/**
 * Renders answers through the exact response cache. An answer depends only on its query and the mirror
 * state (plus which resources are past the staleness threshold, which is in the key), so it is cached
 * under the state version it was rendered from and stored only if that version is still current when
 * it is done (a commit meanwhile makes it unstorable, never stale).
 */
export class ReadAnswers {
  readonly cache: ResponseCache;
  private last: RenderContext | undefined;

  constructor(
    private readonly tracker: MirrorStateTracker,
    private readonly settings: ReadApiSettings,
    private readonly clock: () => number = Date.now,
  ) {
    this.cache = new ResponseCache(settings.cacheMaxBytes);
  }

  /** The context of now: the tracked state (strict mode: verified against the generation first). */
  context(): RenderContext | Promise<RenderContext> {
    if (!this.settings.strict) return this.contextOf(this.tracker.current);
    return this.tracker.verified().then((state) => this.contextOf(state));
  }

  private contextOf(state: MirrorState): RenderContext {
    const now = this.clock();
    const { staleAfterMs } = this.settings;
    // The context changes only with the state or when a resource crosses the staleness threshold: the
    // last one is reused while neither happened (no Date formatting, no new objects per request).
    const last = this.last;
    if (
      last?.state === state &&
      last.events.stale === isStale(state.eventsAsOf, now, staleAfterMs) &&
      last.listings.stale === isStale(state.listingsAsOf, now, staleAfterMs)
    ) {
      return last;
    }
    this.last = {
      state,
      events: freshness(state.eventsAsOf, now, staleAfterMs),
      listings: freshness(state.listingsAsOf, now, staleAfterMs),
    };
    return this.last;
  }

  /** The answer of `key` (which must identify the query completely), from the cache or rendered now. */
  async answer(key: string, render: (context: RenderContext) => Promise<unknown>): Promise<RenderedBody> {
    // Not awaited unless strict: one promise and microtask hop less per request.
    const current = this.context();
    const context = current instanceof Promise ? await current : current;
    const version = context.state.version;
    const fullKey = `${context.events.stale ? 1 : 0}${context.listings.stale ? 1 : 0}|${key}`;
    const hit = this.cache.get(version, fullKey);
    if (hit) return hit;
    const body = JSON.stringify(await render(context));
    const rendered = { body, etag: etagOf(body) };
    if (this.tracker.current.version === version) this.cache.set(version, fullKey, rendered);
    return rendered;
  }

  /** An answer that must not be cached (a live re-read). */
  async uncached(render: (context: RenderContext) => Promise<unknown>): Promise<RenderedBody> {
    const body = JSON.stringify(await render(await this.context()));
    return { body, etag: etagOf(body) };
  }
}
