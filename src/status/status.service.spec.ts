import { describe, expect, it } from 'vitest';
import { loadAppConfig } from '../config/app.config';
import { SyncConfig } from '../config/sync.config';
import type { UpstreamClient } from '../upstream/upstream.client';
import type { StatusFigures, WebhookBacklog } from './status.figures';
import type { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import type { ServedAccuracyView } from '../catalog-sync/served-accuracy.sampler';
import type { StatusSampleRepository, StoredSample } from './status-sample.repository';
import { StatusService } from './status.service';

const NOW = Date.UTC(2026, 10, 27, 12, 30, 15);

/**
 * The repositories, faked: every read answers a few microtasks later and counts how many reads are in flight, so
 * a build that fans its reads out is seen (more than one at once) without any timer.
 */
class FakeStore {
  builds = 0;
  inFlight = 0;
  maxInFlight = 0;
  failNext = false;
  backlog: WebhookBacklog = { undelivered: 0, failed: 0, endpoints: [] };
  stored: StoredSample[] = [];
  accuracy: ServedAccuracyView = {
    sampling: true,
    intervalMs: 5000,
    sampled: 0,
    stale: 0,
    undecided: 0,
    accuracy: null,
    window: 0,
    remembered: 0,
  };

  private async read<T>(value: T): Promise<T> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    for (let i = 0; i < 3; i++) await Promise.resolve();
    this.inFlight -= 1;
    return value;
  }

  readonly figures = {
    now: async () => {
      this.builds += 1;
      if (this.failNext) {
        this.failNext = false;
        throw new Error('connection lost');
      }
      return this.read(NOW);
    },
    lastPasses: () => this.read([]),
    lastCompletedPasses: () => this.read([]),
    passesSince: () => this.read([]),
    openByState: () => this.read({}),
    oldestOpen: () => this.read(null),
    finalCounts: () => this.read([{ state: 'confirmed', attempt: 1, count: 2 }]),
    finalDurations: () => this.read([100, 200]),
    webhookBacklog: () => this.read(this.backlog),
    replicasSeen: () => this.read([]),
  };

  readonly samples = {
    read: (figures: readonly string[]) => this.read(this.stored.filter((s) => figures.includes(s.figure))),
  };
  readonly mirror = { servedAccuracy: () => this.accuracy };
}

const minute = (m: number): number => Date.UTC(2026, 10, 27, 12, m);
const at = (m: number): string => new Date(minute(m)).toISOString();
const sample = (figure: string, m: number, value: number, label = ''): StoredSample => ({
  figure,
  label,
  minute: minute(m),
  value,
});

function service(store: FakeStore): StatusService {
  const upstream = {
    verifyKeyCached: () => Promise.resolve({ ok: true, environment: 'sandbox', checkedAt: NOW }),
  };
  return new StatusService(
    store.samples as unknown as StatusSampleRepository,
    store.figures as unknown as StatusFigures,
    upstream as unknown as UpstreamClient,
    loadAppConfig({}),
    new SyncConfig(),
    store.mirror as unknown as CatalogMirrorService,
  );
}

describe(StatusService.name, () => {
  it('builds once for callers that ask at the same time, and serves that report again right after', async () => {
    const store = new FakeStore();
    const sut = service(store);
    const [a, b, c] = await Promise.all([sut.report(), sut.report(), sut.report()]);
    expect(store.builds).toBe(1);
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(await sut.report()).toBe(a);
    expect(store.builds).toBe(1);
  });

  it('reads one statement at a time (a page load never takes several pool connections)', async () => {
    const store = new FakeStore();
    const report = await service(store).report();
    expect(report.orders.final_24h).toEqual({ confirmed: 4 }); // the two live minutes, both read
    expect(store.maxInFlight).toBe(1);
  });

  it('keeps no failed build: its callers get the error, the next caller builds again', async () => {
    const store = new FakeStore();
    const sut = service(store);
    store.failNext = true;
    const failed = await Promise.allSettled([sut.report(), sut.report()]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(store.builds).toBe(1);
    expect((await sut.report()).generated_at).toBe(new Date(NOW).toISOString());
    expect(store.builds).toBe(2);
  });

  it("reports the webhook totals of every endpoint, not the sum of the listed ones'", async () => {
    const store = new FakeStore();
    store.backlog = {
      undelivered: 250,
      failed: 7,
      endpoints: [
        { endpointId: 'e-1', undelivered: 3, retrying: 1, oldestUndeliveredAt: NOW - 10_000, failed: 0 },
      ],
    };
    const report = await service(store).report();
    expect(report.webhooks).toEqual({
      undelivered: 250,
      failed_24h: 7,
      endpoints: [
        {
          endpoint_id: 'e-1',
          undelivered: 3,
          retrying: 1,
          oldest_undelivered_age_seconds: 10,
          failed_24h: 0,
        },
      ],
    });
  });

  it("reports served accuracy per minute from every replica's samples, and this replica's sampler", async () => {
    const store = new FakeStore();
    store.stored = [
      // Minute 28: two replicas' rows, 10 samples, 1 stale; minute 29: 10 samples, none stale; 30: none.
      sample('mirror.sampled', 28, 6),
      sample('mirror.sampled', 28, 4),
      sample('mirror.stale', 28, 1),
      sample('mirror.sampled', 29, 10),
      sample('mirror.staleness_sum', 29, 30, 'hot'),
      sample('mirror.staleness_count', 29, 10, 'hot'),
    ];
    store.accuracy = { ...store.accuracy, sampled: 20, stale: 1, accuracy: 0.95, window: 20 };
    const { catalog_accuracy: sut } = await service(store).report();
    expect(sut).toMatchObject({
      sampling: true,
      sample_interval_ms: 5000,
      accuracy_now: 0.95,
      window_samples: 20,
      sampled_window: 20,
      stale_window: 1,
      accuracy_window: 0.95,
    });
    const accuracy = sut.accuracy_per_minute[0]?.points ?? [];
    expect(accuracy.slice(-3)).toEqual([
      { at: at(28), value: 90 },
      { at: at(29), value: 100 },
      { at: at(30), value: null },
    ]);
    expect(sut.samples_per_minute.map((s) => [s.label, s.points.at(-3)?.value])).toEqual([
      ['sampled', 10],
      ['stale', 1],
    ]);
    expect(sut.staleness_seconds.map((s) => [s.label, s.points.slice(-2).map((p) => p.value)])).toEqual([
      ['hot', [3, null]],
    ]);
  });
});
