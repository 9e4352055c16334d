import { Injectable, Logger } from '@nestjs/common';
import { raceTimeout, TIMED_OUT } from '../common/race-timeout';
import { logGate } from '../durable-work/worker-loop';
import { CatalogMirrorRepository } from './catalog-mirror.repository';
import type { LiveListingObservation, LiveListingResult } from './catalog-mirror.types';
import { ServedAccuracyMetrics, type ObservationSource } from './served-accuracy.metrics';

/**
 * How long a caller waits for the mirror write of an observation: past it the caller goes on (the write finishes,
 * or fails, on its own). Listed in catalog-sync.retries.ts.
 */
export const OBSERVATION_WRITE_TIMEOUT_MS = 2000;
const FAILURE_LOG_EVERY_MS = 60_000;

/**
 * Every observation counts (issue 30 item 4): what checkout's revalidation or the accuracy sampler saw of one
 * listing live is applied to its mirror row at once (`applyLiveListing`: guarded by `observed_at`, generation
 * bumped and notified), never at the observer's expense — a failed or slow write is logged (at most once a minute)
 * and counted (`mirror_observations_total{source,result}`), never thrown, and waited for OBSERVATION_WRITE_TIMEOUT_MS
 * at most.
 */
@Injectable()
export class MirrorObservations {
  private readonly logger = new Logger('MirrorObservations');
  private readonly failureLogGate = logGate(FAILURE_LOG_EVERY_MS);

  constructor(
    private readonly repository: CatalogMirrorRepository,
    private readonly metrics: ServedAccuracyMetrics,
  ) {}

  /** The write's result, or null when it failed or took longer than OBSERVATION_WRITE_TIMEOUT_MS. */
  async apply(
    observation: LiveListingObservation,
    source: ObservationSource,
  ): Promise<LiveListingResult | null> {
    const write = this.repository.applyLiveListing(observation).then(
      (result) => {
        this.metrics.observation(source, result.changed ? 'changed' : 'unchanged');
        return result;
      },
      (error: unknown) => {
        this.metrics.observation(source, 'failed');
        this.warn(source, observation, error instanceof Error ? error.message : String(error));
        return null;
      },
    );
    const result = await raceTimeout(write, OBSERVATION_WRITE_TIMEOUT_MS);
    if (result !== TIMED_OUT) return result;
    this.metrics.observation(source, 'timeout');
    this.warn(source, observation, `not written within ${OBSERVATION_WRITE_TIMEOUT_MS} ms (still running)`);
    return null;
  }

  private warn(source: ObservationSource, o: LiveListingObservation, reason: string): void {
    if (!this.failureLogGate()) return;
    this.logger.warn(
      { source, eventId: o.eventId.toString(), ticketId: o.ticketId.toString(), reason },
      'live observation not applied to the mirror; the next pass or walk corrects the row',
    );
  }
}
