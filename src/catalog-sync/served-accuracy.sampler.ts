import { Injectable, Logger } from '@nestjs/common';
import { SyncConfig } from '../config/sync.config';
import { DatabaseClock } from '../database/database-clock';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { logGate } from '../durable-work/worker-loop';
import { searchActiveListing } from '../upstream/listing-search';
import { UpstreamClient } from '../upstream/upstream.client';
import type { ListingRow } from './catalog-mirror.types';
import { MirrorObservations } from './mirror-observations';
import {
  AccuracyWindow,
  sampleVerdict,
  ServedReservoir,
  type SampleVerdict,
  type ServedListing,
} from './served-accuracy';
import { ServedAccuracyMetrics, type SampleFailure } from './served-accuracy.metrics';

/** Distinct served listings a replica remembers to sample from (bounded memory: about 100 bytes each). */
export const SERVED_RESERVOIR_SIZE = 2000;
/** Only listings served this recently are sampled: the question is whether what readers see now is buyable. */
export const SERVED_RECENT_MS = 60_000;
/** Samples behind `mirror_served_accuracy` (the gauge is the share of buyable ones among the last this many). */
export const ACCURACY_WINDOW_SAMPLES = 100;
/** One sample's live walk (its event's active listings) is cut after this long. Listed in catalog-sync.retries.ts. */
export const SAMPLE_WALK_TIMEOUT_MS = 5000;
const FAILURE_LOG_EVERY_MS = 60_000;

/** This replica's sampler figures (totals since start; the status recorder turns them into per-minute rows). */
export interface ServedAccuracyView {
  /** false: MIRROR_ACCURACY_SAMPLE_INTERVAL_MS = 0 on this replica. */
  sampling: boolean;
  intervalMs: number;
  /** Samples with a decisive answer, and those among them not buyable at the served price. */
  sampled: number;
  stale: number;
  /** Samples that decided nothing (upstream failure or timeout; null identifiers). */
  undecided: number;
  /** Buyable share of the last `window` samples, null before the first one. */
  accuracy: number | null;
  window: number;
  /** Distinct served listings remembered now. */
  remembered: number;
}

/** What one sample did (for tests and logs): null when nothing was served recently. */
export type SampleOutcome =
  | { listing: ServedListing; verdict: SampleVerdict }
  | { listing: ServedListing; failure: SampleFailure }
  | null;

/**
 * The served-accuracy sampler (issue 30 item 5; docs/catalog-sync.md "Served accuracy"): the read API notes the
 * listing rows it serves (`noteServed`, synchronous, O(rows), into a bounded reservoir); every
 * MIRROR_ACCURACY_SAMPLE_INTERVAL_MS (0 = off) this replica draws one listing served in the last minute and re-reads
 * it live with the same search checkout's revalidation uses (`searchActiveListing`: a complete walk of its event).
 * Buyable = still active at the served price. The verdict feeds `mirror_served_accuracy` and its counters, and what
 * the walk saw is applied to the mirror like any observation (a gone or repriced row is corrected at once).
 */
@Injectable()
export class ServedAccuracySampler {
  private readonly logger = new Logger('ServedAccuracySampler');
  private readonly failureLogGate = logGate(FAILURE_LOG_EVERY_MS);
  private readonly reservoir = new ServedReservoir(SERVED_RESERVOIR_SIZE);
  private readonly window = new AccuracyWindow(ACCURACY_WINDOW_SAMPLES);
  private readonly totals = { sampled: 0, stale: 0, undecided: 0 };

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly observations: MirrorObservations,
    private readonly metrics: ServedAccuracyMetrics,
    private readonly clock: DatabaseClock,
    private readonly config: SyncConfig,
    work: DurableWorkService,
  ) {
    metrics.watchAccuracy(() => this.window.accuracy);
    const intervalMs = config.MIRROR_ACCURACY_SAMPLE_INTERVAL_MS;
    // 0 = off: no loop at all on this replica (the served rows are still noted, cheaply, and never sampled).
    if (intervalMs > 0)
      work.periodic({
        name: 'mirror-accuracy-sampler',
        intervalMs,
        run: async () => {
          await this.sampleOnce();
        },
      });
  }

  /** The rows the read API just served (synchronous and cheap: on the read path). */
  noteServed(rows: readonly ListingRow[]): void {
    if (rows.length > 0) this.reservoir.note(rows, performance.now());
  }

  /** The buyable share of the window now (the gauge), null before the first sample. */
  accuracy(): number | null {
    return this.window.accuracy;
  }

  view(): ServedAccuracyView {
    const intervalMs = this.config.MIRROR_ACCURACY_SAMPLE_INTERVAL_MS;
    return {
      sampling: intervalMs > 0,
      intervalMs,
      ...this.totals,
      accuracy: this.window.accuracy,
      window: this.window.count,
      remembered: this.reservoir.size,
    };
  }

  /** One sample now (the loop's pass; tests call it directly). Never throws. */
  async sampleOnce(): Promise<SampleOutcome> {
    const listing = this.reservoir.take(performance.now() - SERVED_RECENT_MS);
    if (!listing) return null;
    const eventId = BigInt(listing.eventId);
    const ticketId = BigInt(listing.ticketId);
    // Stamped before the walk, on the database clock, as every observation is (live-listing.reader.ts).
    const observedAt = this.clock.now();
    let search;
    try {
      search = await searchActiveListing(this.upstream, {
        eventId,
        ticketId,
        signal: AbortSignal.timeout(SAMPLE_WALK_TIMEOUT_MS),
      });
    } catch (error) {
      return this.failed(listing, 'upstream', error instanceof Error ? error.message : String(error));
    }
    if (search.kind === 'undecided')
      return this.failed(listing, 'undecided', `${search.maybe} item(s) with null identifiers`);
    const live = search.kind === 'found' ? search.listing : null;
    const verdict = sampleVerdict(listing.priceMinor, live?.askPriceMinor ?? null);
    this.window.add(verdict);
    this.totals.sampled++;
    if (verdict !== 'buyable') this.totals.stale++;
    this.metrics.sample(verdict);
    await this.observations.apply({ eventId, ticketId, live, observedAt }, 'sampler');
    return { listing, verdict };
  }

  private failed(listing: ServedListing, failure: SampleFailure, reason: string): SampleOutcome {
    this.totals.undecided++;
    this.metrics.sampleFailed(failure);
    if (this.failureLogGate())
      this.logger.warn(
        { eventId: listing.eventId, ticketId: listing.ticketId, failure, reason },
        'accuracy sample decided nothing; the next one tries another listing',
      );
    return { listing, failure };
  }
}
