import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import type { EventRow, ListingRow, ListingSort } from '../catalog-sync/catalog-mirror.types';
import type { CursorBinding } from '../common/keyset-cursor';
import { KeysetCursorCodec } from '../common/keyset-cursor';
import { keysetPage } from '../common/keyset-page';
import { validationFailed } from '../common/validation';
import { UpstreamClient } from '../upstream/upstream.client';
import type { EventsQueryDto } from './dto/events.query.dto';
import type { ListingsQueryDto } from './dto/listings.query.dto';
import { parseRfc3339 } from './dto/rfc3339.validator';
import { eventGone, eventNotFound, listingGone, listingNotFound } from './listings.errors';
import {
  eventDetailView,
  eventView,
  listingDetailView,
  listingView,
  moneyView,
  olderAsOf,
} from './listing.mapper';
import { ListingBatchReader } from './listing-batch.reader';
import { ListingPageBatchReader } from './listing-page-batch.reader';
import { readLiveListing } from './live-listing.reader';
import { DatabaseClock } from '../database/database-clock';
import { MirrorStateTracker } from './mirror-state.tracker';
import { READ_API_SETTINGS, type ReadApiSettings } from './read-api.settings';
import { ReadAnswers, type RenderContext } from './read-answers';
import type { RenderedBody } from './response-cache';

/** An answer and how long a client may reuse it. */
export interface ReadAnswer extends RenderedBody {
  maxAgeSeconds: number;
}

const U64_TEXT = /^(0|[1-9]\d{0,19})$/;
const TS_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function badCursor(): Error {
  return validationFailed([{ field: 'cursor', problems: ['cursor is not a valid cursor for this query'] }]);
}

/** A decoded (signed, so ours) listing position, checked once more against its sort's shape. */
function listingPosition(position: readonly (string | null)[], sort: ListingSort): [string, string, string] {
  const [key, eventId, ticketId] = position;
  const keyOk = typeof key === 'string' && (sort === 'newest' ? TS_KEY.test(key) : U64_TEXT.test(key));
  if (position.length !== 3 || !keyOk || !U64_TEXT.test(eventId ?? '') || !U64_TEXT.test(ticketId ?? '')) {
    throw badCursor();
  }
  return [key, eventId as string, ticketId as string];
}

function eventPosition(position: readonly (string | null)[]): [string | null, string] {
  const [key, eventId] = position;
  if (position.length !== 2 || !(key === null || TS_KEY.test(key ?? '')) || !U64_TEXT.test(eventId ?? '')) {
    throw badCursor();
  }
  return [key ?? null, eventId as string];
}

/**
 * The marketplace's read API over the mirror: events, one event with its listing summary, listing pages
 * sorted by exact price or recency, one listing (optionally re-read live). Every answer is rendered once
 * per (query, mirror state) and served from the exact response cache until the mirror moves on. The listing rows
 * of each rendered answer are noted for the served-accuracy sampler (CatalogMirrorService.noteServed).
 */
@Injectable()
export class ListingsService implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly mirror: CatalogMirrorService,
    private readonly cursors: KeysetCursorCodec,
    private readonly upstream: UpstreamClient,
    @Inject(READ_API_SETTINGS) private readonly settings: ReadApiSettings,
    private readonly sync: CatalogSyncService,
    private readonly tracker: MirrorStateTracker,
    private readonly clock: DatabaseClock,
    readonly answers: ReadAnswers,
    /** Single-listing reads of one event-loop turn share a round trip (`GET /v1/listings/{e}/{t}`). */
    private readonly listingReads: ListingBatchReader,
    /** One event's listing pages of one event-loop turn share a round trip (`GET /v1/events/{e}/listings`). */
    private readonly pageReads: ListingPageBatchReader,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.tracker.start();
  }

  onModuleDestroy(): void {
    this.tracker.stop();
  }

  /** `GET /v1/events`: active events by (start_at, event_id), unparsed starts last. */
  async events(query: EventsQueryDto): Promise<ReadAnswer> {
    const startsAfter = query.starts_after === undefined ? undefined : parseRfc3339(query.starts_after);
    const startsBefore = query.starts_before === undefined ? undefined : parseRfc3339(query.starts_before);
    const binding: CursorBinding = {
      sort: 'events:start_at',
      filters: { q: query.q, starts_after: startsAfter, starts_before: startsBefore },
    };
    const key = (): string =>
      JSON.stringify(['events', query.q, startsAfter, startsBefore, query.limit, query.cursor]);
    const answer = await this.answers.answer(key, async ({ state, events }) => {
      // Decoded (signature checked) only when rendering: a cached answer exists only for a cursor that
      // decoded under this very key, and a bad cursor is refused every time (refusals are not cached).
      const after =
        query.cursor === undefined ? undefined : eventPosition(this.cursors.decode(query.cursor, binding));
      const rows = await this.mirror.eventsPage({
        nameContains: query.q,
        startsAfter,
        startsBefore,
        limit: query.limit,
        after,
      });
      const page = keysetPage(
        rows,
        query.limit,
        (r: EventRow) => [r.start_key, r.event_id],
        this.cursors,
        binding,
      );
      return {
        items: page.items.map((r) => eventView(r, state)),
        next_cursor: page.next_cursor,
        data_as_of: events.data_as_of,
        stale: events.stale,
      };
    });
    return { ...answer, maxAgeSeconds: this.settings.eventsMaxAgeSeconds };
  }

  /** `GET /v1/events/{event_id}`: the event and its active listing count, lowest and highest ask. */
  async event(eventId: bigint): Promise<ReadAnswer> {
    const id = eventId.toString();
    const answer = await this.answers.answer(
      () => JSON.stringify(['event', id]),
      async (context) => {
        const row = await this.requireEvent(id);
        const summary = await this.mirror.listingSummary(id);
        const { protocol } = context.state;
        const listingsAsOf = context.event?.asOfMs ?? null;
        const asOf = olderAsOf(
          context.state.eventsAsOf,
          listingsAsOf === null ? null : new Date(listingsAsOf),
        );
        return eventDetailView(
          row,
          context.state,
          {
            active_listings: summary.active,
            lowest_ask: summary.lowest === null ? null : moneyView(summary.lowest, protocol),
            highest_ask: summary.highest === null ? null : moneyView(summary.highest, protocol),
          },
          {
            data_as_of: asOf?.toISOString() ?? null,
            // The older as-of is stale exactly when either resource is.
            stale: context.events.stale || (context.event?.stale ?? context.listings.stale),
          },
        );
      },
      id,
    );
    // Demand only once the event is known to exist (an unknown event's 404 throws before): made-up ids never
    // become hot.
    this.sync.noteDemand(eventId, 'read');
    this.observeAge(id);
    return { ...answer, maxAgeSeconds: this.settings.listingsMaxAgeSeconds };
  }

  /** `mirror_staleness_seconds{tier}` of an event-scoped answer (a map lookup; no query). */
  private observeAge(eventId: string): void {
    const now = this.clock.nowMs();
    const { asOfMs } = this.answers.eventFreshness(this.tracker.current, eventId, now);
    if (asOfMs !== null) this.sync.observeServedAge(eventId, (now - asOfMs) / 1000);
  }

  /**
   * `GET /v1/listings` (eventId undefined) and `GET /v1/events/{event_id}/listings`. With `fresh=true` (an
   * event's page only) the event is walked first (CatalogSyncService.walkEvent, single-flight) within
   * LISTINGS_FRESH_TIMEOUT_MS; if that walk does not complete in time the page is answered from the mirror
   * marked `stale: true`.
   */
  async listings(query: ListingsQueryDto, eventId?: bigint): Promise<ReadAnswer> {
    const { min_price: minPrice, max_price: maxPrice, sort, limit } = query;
    if (minPrice !== undefined && maxPrice !== undefined && BigInt(minPrice) > BigInt(maxPrice)) {
      throw validationFailed([{ field: 'max_price', problems: ['max_price must not be below min_price'] }]);
    }
    const fresh = query.fresh === 'true';
    if (fresh && eventId === undefined) {
      throw validationFailed([
        { field: 'fresh', problems: ["fresh is only valid on an event's listing page"] },
      ]);
    }
    const event = eventId?.toString();
    const walked = fresh && eventId !== undefined ? await this.walkFirst(eventId) : true;
    const binding: CursorBinding = {
      sort: `listings:${sort}`,
      filters: { event_id: event, min_price: minPrice, max_price: maxPrice },
    };
    const key = (): string =>
      JSON.stringify(['listings', event, sort, minPrice, maxPrice, limit, query.cursor]);
    const positionOf =
      sort === 'newest'
        ? (r: ListingRow) => [r.first_seen_key, r.event_id, r.ticket_id]
        : (r: ListingRow) => [r.ask_price_minor, r.event_id, r.ticket_id];
    const render = async ({ state, listings, event: own }: RenderContext): Promise<unknown> => {
      // As for events: the cursor is checked only when the answer is rendered, never for a cache hit.
      const after =
        query.cursor === undefined
          ? undefined
          : listingPosition(this.cursors.decode(query.cursor, binding), sort);
      const rows = await this.pageReads.read({ sort, eventId: event, minPrice, maxPrice, limit, after });
      // An empty first page of one event: tell an unknown (404) or removed (410) event from one with nothing.
      if (rows.length === 0 && event !== undefined && after === undefined) await this.requireEvent(event);
      const page = keysetPage(rows, limit, positionOf, this.cursors, binding);
      const asOf = own ?? listings;
      this.mirror.noteServed(page.items);
      return {
        items: page.items.map((r) => listingView(r, state, asOf.data_as_of)),
        next_cursor: page.next_cursor,
        data_as_of: asOf.data_as_of,
        // fresh=true whose walk did not complete in time: the mirror's page, said to be stale.
        stale: asOf.stale || !walked,
      };
    };
    // A fallback page (walk not completed) differs from the plain one only by `stale`: its own key.
    const answer = await this.answers.answer(walked ? key : () => `unwalked|${key()}`, render, event);
    // After the answer: an unknown (404) or removed (410) event's first page throws before, and notes no demand.
    if (eventId !== undefined) this.sync.noteDemand(eventId, 'read');
    if (event !== undefined) this.observeAge(event);
    return { ...answer, maxAgeSeconds: fresh ? 0 : this.settings.listingsMaxAgeSeconds };
  }

  /** fresh=true: one complete walk of the event within LISTINGS_FRESH_TIMEOUT_MS; false when none completed. */
  private async walkFirst(eventId: bigint): Promise<boolean> {
    try {
      const pass = await this.sync.walkEvent(eventId, { timeoutMs: this.settings.freshTimeoutMs });
      if (pass.status !== 'completed') return false;
      // The walk committed: read the state now, so this answer carries the walk's data_as_of.
      await this.tracker.refresh();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * `GET /v1/listings/{event_id}/{ticket_id}`: from the mirror, or with `fresh` re-read live from the
   * upstream first (one event-filtered walk bounded by LISTINGS_FRESH_TIMEOUT_MS), the mirror row updated
   * when it differs. Never mirrored → 404; removed → 410 with when it was last seen.
   */
  async listing(eventId: bigint, ticketId: bigint, fresh = false): Promise<ReadAnswer> {
    const key = [eventId.toString(), ticketId.toString()] as const;
    const render = async (context: RenderContext, checkedLiveAt: Date | null): Promise<unknown> => {
      // A live re-read has just written the row: read it on its own, after that commit.
      const row = await (checkedLiveAt ? this.mirror.listing(...key) : this.listingReads.read(...key));
      if (!row) throw listingNotFound();
      if (row.removed_at) throw listingGone(row, checkedLiveAt);
      this.mirror.noteServed([row]);
      const asOf = context.event ?? context.listings;
      return listingDetailView(row, context.state, asOf, checkedLiveAt?.toISOString() ?? null);
    };
    if (!fresh) {
      const answer = await this.answers.answer(
        () => JSON.stringify(['listing', ...key]),
        (c) => render(c, null),
        key[0],
      );
      // Only a listing served (200) is demand: a 404/410 (unknown listing or event) notes none.
      this.sync.noteDemand(eventId, 'read');
      this.observeAge(key[0]);
      return { ...answer, maxAgeSeconds: this.settings.listingsMaxAgeSeconds };
    }
    const observation = await readLiveListing(
      this.upstream,
      eventId,
      ticketId,
      this.settings.freshTimeoutMs,
      this.clock.now(),
    );
    const result = await this.mirror.applyLiveListing(observation);
    if (result.changed) await this.tracker.refresh().catch(() => undefined);
    const answer = await this.answers.uncached((c) => render(c, observation.observedAt), key[0]);
    this.sync.noteDemand(eventId, 'read');
    return { ...answer, maxAgeSeconds: 0 };
  }

  private async requireEvent(eventId: string): Promise<EventRow> {
    const row = await this.mirror.event(eventId);
    if (!row) throw eventNotFound();
    if (row.removed_at) throw eventGone(row);
    return row;
  }
}
