import { Injectable } from '@nestjs/common';
import { PgListener } from '../database/pg-listener';
import { CatalogMirrorRepository, listingsPageShape } from './catalog-mirror.repository';
import { toMirrorState } from './catalog-mirror.state';
import type {
  EventRow,
  EventsQuery,
  ListingRow,
  ListingsQuery,
  ListingSummaryRow,
  LiveListingObservation,
  LiveListingResult,
  MirrorState,
} from './catalog-mirror.types';
import { MIRROR_GENERATION_CHANNEL } from './mirror-generation.repository';
import { MirrorObservations } from './mirror-observations';
import type { ObservationSource } from './served-accuracy.metrics';
import { ServedAccuracySampler, type ServedAccuracyView } from './served-accuracy.sampler';

/**
 * Read access to the mirror for the read API (events/listings pages, one event, one listing, summaries),
 * the state every answer depends on (generation, last completed passes, protocol config) and the one
 * write the read API makes: a live re-read of one listing (`?fresh=true`), committed like a sync page
 * (generation bumped and notified in the same transaction). Identifiers are u64 decimal strings here.
 */
@Injectable()
export class CatalogMirrorService {
  private watched = false;

  constructor(
    private readonly repository: CatalogMirrorRepository,
    private readonly listener: PgListener,
    private readonly observations: MirrorObservations,
    private readonly sampler: ServedAccuracySampler,
  ) {}

  /** Active listings in keyset order, `limit + 1` rows (the extra one says whether more follow). */
  listingsPage(query: ListingsQuery): Promise<ListingRow[]> {
    return this.repository.listingsPage(query);
  }

  /** The shape of a page's statement: pages of one shape can be read together by `listingsPages`. */
  listingsPageShape(query: ListingsQuery): string {
    return listingsPageShape(query);
  }

  /** Pages of one event's listings of one shape in one round trip (CatalogMirrorRepository.listingsPages). */
  listingsPages(queries: readonly ListingsQuery[]): Promise<ListingRow[][]> {
    return this.repository.listingsPages(queries);
  }

  /** Events (active) by (start_at, event_id), unparsed starts last, `limit + 1` rows. */
  eventsPage(query: EventsQuery): Promise<EventRow[]> {
    return this.repository.eventsPage(query);
  }

  /** One event, removed ones included (removed_at set); undefined when never mirrored. */
  event(eventId: string): Promise<EventRow | undefined> {
    return this.repository.event(eventId);
  }

  /** One listing, removed ones included (removed_at set); undefined when never mirrored. */
  listing(eventId: string, ticketId: string): Promise<ListingRow | undefined> {
    return this.repository.listing(eventId, ticketId);
  }

  /** Several listings by (event_id, ticket_id) in one round trip; keys never mirrored are absent. */
  listingsByKey(keys: readonly (readonly [string, string])[]): Promise<ListingRow[]> {
    return this.repository.listingsByKey(keys);
  }

  listingSummary(eventId: string): Promise<ListingSummaryRow> {
    return this.repository.listingSummary(eventId);
  }

  /** Generation, last completed passes and protocol config, read now (one round trip). */
  async readState(): Promise<MirrorState> {
    return toMirrorState(await this.repository.state());
  }

  /** The mirror generation with its database epoch (`MirrorState.generationKey`), read now. */
  readGenerationKey(): Promise<string> {
    return this.repository.generationKey();
  }

  /**
   * Calls `onChange` whenever a transaction bumping the generation commits (LISTEN mirror_generation)
   * and whenever the listening connection is (re)established. One listener per service instance.
   */
  async watchGeneration(onChange: () => void, retryMs: number): Promise<void> {
    if (this.watched) throw new Error('the mirror generation is already watched');
    this.watched = true;
    await this.listener.listen(MIRROR_GENERATION_CHANNEL, () => onChange(), retryMs);
  }

  /**
   * Applies what a live re-read saw of one listing: updates its row when the price, fields or presence
   * differ (never over a newer observation), bumping and notifying the generation in the same transaction.
   */
  applyLiveListing(observation: LiveListingObservation): Promise<LiveListingResult> {
    return this.repository.applyLiveListing(observation);
  }

  /**
   * A live observation made by another module (checkout's revalidation found the listing gone or repriced): applied
   * as `applyLiveListing` does, but never at the caller's expense — a failed write is logged and counted
   * (`mirror_observations_total`), never thrown, and waited for OBSERVATION_WRITE_TIMEOUT_MS at most. Null when it
   * failed or took longer. Stamp `observedAt` with DatabaseClock before the live read (live-listing.reader.ts).
   */
  applyObservation(
    observation: LiveListingObservation,
    source: ObservationSource,
  ): Promise<LiveListingResult | null> {
    return this.observations.apply(observation, source);
  }

  /**
   * The read API's served rows, for the served-accuracy sampler (docs/catalog-sync.md "Served accuracy"):
   * synchronous, O(rows), bounded memory. Call it with the listing rows an answer carries when it is rendered.
   */
  noteServed(rows: readonly ListingRow[]): void {
    this.sampler.noteServed(rows);
  }

  /** This replica's sampler figures (totals since start, the window's accuracy): the status page asks this. */
  servedAccuracy(): ServedAccuracyView {
    return this.sampler.view();
  }
}
