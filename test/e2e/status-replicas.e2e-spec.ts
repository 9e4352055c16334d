import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ServiceReplica } from '../../bench/chaos/service-replica';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import type { StatusReport } from '../../src/status/status.report';
import { BOTH_COUNTED, TwoReplicas } from '../support/two-replicas';
import { waitUntil } from '../support/wait';

/** Every `upstream_requests_total` sample of a replica's /metrics, summed: what that process counted. */
async function upstreamAttempts(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  return [...text.matchAll(/^upstream_requests_total\{[^}]*\} (\S+)$/gm)].reduce(
    (a, m) => a + Number(m[1]),
    0,
  );
}

function requestsIn(r: StatusReport): number {
  return r.upstream.by_operation.reduce((n, o) => n + o.requests, 0);
}

/**
 * The status report across two real service processes on one database: each replica records its own upstream
 * attempts, the report sums them (neither replica's counted twice nor lost), and lists both replicas.
 */
describe('status report across two replicas (e2e: two service processes on one database)', () => {
  const service = new TwoReplicas(inject('databaseAdminUrl'));
  const apiKey = service.apiKey;
  let sandbox: SandboxHandle;
  let a: ServiceReplica;
  let b: ServiceReplica;
  let listingPath = '';

  const report = async (url: string): Promise<StatusReport> => {
    const res = await fetch(`${url}/v1/admin/status`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as StatusReport;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      seed: 'status-replicas',
      events: 3,
      listings: 30,
    });
    const { eventId } = sandbox.admin.createEvent();
    const listing = sandbox.admin.seedListing({
      eventId,
      seller: { kind: 'user', subject: 'status-seller' },
      askPriceMinor: 1_000n,
    });
    listingPath = `/v1/listings/${listing.event_id}/${listing.ticket_id}?fresh=true`;
    ({ a, b } = await service.start({
      name: 'status',
      upstreamUrl: sandbox.url,
      extra: {
        UPSTREAM_API_KEY: sandbox.admin.apiKey,
        SYNC_ENABLED: 'false',
        // A deployment (sandbox process by URL): /metrics is admin-only unless opened.
        METRICS_PUBLIC: 'true',
        SYNC_ON_STARTUP: 'false',
        STATUS_RECORD_INTERVAL_MS: '200',
        ...BOTH_COUNTED,
      },
    }));
  }, 180_000);

  afterAll(async () => {
    await service.stop();
    await sandbox?.close();
  });

  it("sums both replicas' upstream attempts exactly, and lists both replicas as live", async () => {
    for (const [replica, reads] of [
      [a, 3],
      [b, 5],
    ] as const) {
      for (let i = 0; i < reads; i++) {
        const res = await fetch(`${replica.url}${listingPath}`, {
          headers: { authorization: `Bearer ${apiKey}` },
          signal: AbortSignal.timeout(10_000),
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    }
    const counted = async (): Promise<[number, number]> => [
      await upstreamAttempts(a.url),
      await upstreamAttempts(b.url),
    ];
    const [countedA, countedB] = await counted();
    expect(countedA).toBeGreaterThanOrEqual(3);
    expect(countedB).toBeGreaterThanOrEqual(5);
    // Each recorder writes its own row every 200 ms; either replica's report sums both, once.
    let fromA = 0;
    let fromB = 0;
    await waitUntil(
      async () => {
        fromA = requestsIn(await report(a.url));
        fromB = requestsIn(await report(b.url));
        const [nowA, nowB] = await counted();
        return fromA === nowA + nowB && fromB === nowA + nowB;
      },
      10_000,
      250,
    );
    expect(fromA).toBe(fromB);
    expect(fromA).toBeGreaterThanOrEqual(countedA + countedB);

    const replicas = (await report(a.url)).replicas;
    expect(replicas).toHaveLength(2);
    expect(replicas.every((r) => r.live && r.version.length > 0 && r.started_at <= r.seen_at)).toBe(true);
    expect(new Set(replicas.map((r) => r.instance_id)).size).toBe(2);
  });
});
