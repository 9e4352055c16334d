import { describe, expect, it } from 'vitest';
import { loadAppConfig } from '../config/app.config';
import { SyncConfig } from '../config/sync.config';
import type { UpstreamClient } from '../upstream/upstream.client';
import type { StatusFiguresRepository, WebhookBacklog } from './status-figures.repository';
import type { StatusSampleRepository } from './status-sample.repository';
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

  readonly samples = { read: () => this.read([]) };
}

function service(store: FakeStore): StatusService {
  const upstream = {
    verifyKeyCached: () => Promise.resolve({ ok: true, environment: 'sandbox', checkedAt: NOW }),
  };
  return new StatusService(
    store.samples as unknown as StatusSampleRepository,
    store.figures as unknown as StatusFiguresRepository,
    upstream as unknown as UpstreamClient,
    loadAppConfig({}),
    new SyncConfig(),
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
});
