import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import type { SampleVerdict } from './served-accuracy';

/** Where a live observation of one listing came from (the write that applies it is counted by source). */
export type ObservationSource = 'checkout' | 'sampler';
/** How applying it ended: the row changed, nothing to change (or a newer observation won), failed, or too slow. */
export type ObservationResult = 'changed' | 'unchanged' | 'failed' | 'timeout';
/** Why a sample decided nothing: the upstream walk failed or timed out, or null identifiers left it undecided. */
export type SampleFailure = 'upstream' | 'undecided';

/**
 * The served-accuracy metrics (docs/catalog-sync.md "Served accuracy"): `mirror_served_accuracy` (the share of
 * buyable samples in this replica's window, computed at scrape time), the counters Prometheus computes rates from,
 * and the live observations applied to the mirror by checkout and the sampler.
 */
@Injectable()
export class ServedAccuracyMetrics {
  private readonly sampled: Counter;
  private readonly stale: Counter<'reason'>;
  private readonly failures: Counter<'reason'>;
  private readonly observations: Counter<'source' | 'result'>;
  readonly accuracy: Gauge;

  /** The window's share now (null: no sample yet, the gauge has no value); set by the sampler. */
  private accuracyNow: () => number | null = () => null;

  constructor(@Optional() @Inject(MetricsService) metrics?: Pick<MetricsService, 'registry'>) {
    const registers = metrics ? [metrics.registry] : [];
    const accuracy = (): number | null => this.accuracyNow();
    this.accuracy = new Gauge({
      name: 'mirror_served_accuracy',
      help: 'Share of sampled served listings still buyable at the served price (last samples of this replica)',
      registers,
      collect() {
        this.reset();
        const value = accuracy();
        if (value !== null) this.set(value);
      },
    });
    this.sampled = new Counter({
      name: 'mirror_served_sampled_total',
      help: 'Served listings re-read live by the accuracy sampler with a decisive answer',
      registers,
    });
    this.stale = new Counter({
      name: 'mirror_served_stale_total',
      help: 'Sampled served listings no longer buyable at the served price (gone or repriced)',
      labelNames: ['reason'],
      registers,
    });
    this.failures = new Counter({
      name: 'mirror_served_sample_failures_total',
      help: 'Accuracy samples that decided nothing (upstream failed, or null identifiers left it undecided)',
      labelNames: ['reason'],
      registers,
    });
    this.observations = new Counter({
      name: 'mirror_observations_total',
      help: 'Live observations of one listing applied to the mirror, by source and result',
      labelNames: ['source', 'result'],
      registers,
    });
    for (const reason of ['gone', 'repriced']) this.stale.inc({ reason }, 0);
  }

  /** The gauge reads `accuracy` at every scrape. */
  watchAccuracy(accuracy: () => number | null): void {
    this.accuracyNow = accuracy;
  }

  sample(verdict: SampleVerdict): void {
    this.sampled.inc();
    if (verdict !== 'buyable') this.stale.inc({ reason: verdict });
  }

  sampleFailed(reason: SampleFailure): void {
    this.failures.inc({ reason });
  }

  observation(source: ObservationSource, result: ObservationResult): void {
    this.observations.inc({ source, result });
  }
}
