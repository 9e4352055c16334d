import { hash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { MirrorState } from '../catalog-sync/catalog-mirror.types';
import { freshness, isStale, type Freshness } from './listing.mapper';
import { DatabaseClock } from '../database/database-clock';
import { MirrorStateTracker } from './mirror-state.tracker';
import { READ_API_SETTINGS, type ReadApiSettings } from './read-api.settings';
import { ResponseCache, type RenderedBody } from './response-cache';

/** What a render sees: one state and one clock reading for the whole answer. */
export interface RenderContext {
  state: MirrorState;
  events: Freshness;
  listings: Freshness;
  /** An event-scoped answer's own event freshness (ReadAnswers.answer with an event id). */
  event?: EventFreshness;
}

/** One event's own freshness in an answer: `data_as_of` and `stale`, and the instant in ms (null: none). */
export interface EventFreshness extends Freshness {
  asOfMs: number | null;
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
@Injectable()
export class ReadAnswers {
  readonly cache: ResponseCache;
  private readonly clock: () => number;
  private last: RenderContext | undefined;

  constructor(
    private readonly tracker: MirrorStateTracker,
    @Inject(READ_API_SETTINGS) private readonly settings: ReadApiSettings,
    databaseClock: DatabaseClock,
  ) {
    // Freshness (`age`, `stale`) compares the database's sync stamps with the database's clock.
    this.clock = () => databaseClock.nowMs();
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

  /**
   * An event's own listings freshness under `state`: the start of its newest complete walk when that is newer
   * than the last complete full listings pass, else that pass's. A map lookup, no query and no Date.
   */
  eventFreshness(state: MirrorState, eventId: string, nowMs = this.clock()): EventFreshness {
    const walked = state.eventAsOf.get(eventId);
    const asOfMs = walked?.ms ?? state.listingsAsOf?.getTime() ?? null;
    return {
      data_as_of: walked?.iso ?? state.listingsAsOfIso,
      stale: asOfMs === null || nowMs - asOfMs > this.settings.staleAfterMs,
      asOfMs,
    };
  }

  /**
   * The answer of the query `keyOf()` names (it must identify the query completely), from the cache or rendered
   * now. An event-scoped answer passes its event's freshness (`eventFreshness`), which joins the key: a walk of
   * that event moves its answers on without touching the others'. With the cache off no key is made at all.
   */
  async answer(
    keyOf: () => string,
    render: (context: RenderContext) => Promise<unknown>,
    eventId?: string,
  ): Promise<RenderedBody> {
    // Not awaited unless strict: one promise and microtask hop less per request.
    const current = this.context();
    const shared = current instanceof Promise ? await current : current;
    const version = shared.state.version;
    const event = eventId === undefined ? undefined : this.eventFreshness(shared.state, eventId);
    const context = event === undefined ? shared : { ...shared, event };
    let fullKey: string | undefined;
    if (this.cache.enabled) {
      fullKey = `${shared.events.stale ? 1 : 0}${shared.listings.stale ? 1 : 0}|${keyOf()}`;
      if (event !== undefined) fullKey = `${event.asOfMs ?? '-'}${event.stale ? 's' : ''}${fullKey}`;
      const hit = this.cache.get(version, fullKey);
      if (hit) return hit;
    }
    const body = JSON.stringify(await render(context));
    const rendered = { body, etag: etagOf(body) };
    if (fullKey !== undefined && this.tracker.current.version === version)
      this.cache.set(version, fullKey, rendered);
    return rendered;
  }

  /** An answer that must not be cached (a live re-read). */
  async uncached(
    render: (context: RenderContext) => Promise<unknown>,
    eventId?: string,
  ): Promise<RenderedBody> {
    const shared = await this.context();
    const context =
      eventId === undefined ? shared : { ...shared, event: this.eventFreshness(shared.state, eventId) };
    const body = JSON.stringify(await render(context));
    return { body, etag: etagOf(body) };
  }
}
