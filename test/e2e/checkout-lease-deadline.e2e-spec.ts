import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  market,
  orderBody,
  ownerOf,
  postOrder,
  waitFinal,
} from '../support/checkout-helpers';
import { CountingProxy } from '../support/counting-proxy';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

const LEASE_MS = 3_000;
/** Each signing attempt takes this long upstream, then fails with a 503 (retried: same key). */
const SIGN_LATENCY_MS = 1_200;
const SIGNATURES = '/signatures';

/**
 * Issue 31 item 11: fencing holds for every attempt of a call that can move money, not only the first. A drive's
 * database connection stalls (the order's row is locked by another session: its fenced ledger insert waits) while
 * the upstream answers its signing slowly with 503s; the upstream client retries (4 attempts within a 20 s
 * deadline). Before the fix the retries went on past the drive's lease, after which another replica may hold the
 * order; now no signing request reaches the upstream after the lease's end (`lease_until`, database clock).
 */
describe('Checkout: no signing attempt after the drive lease ends (e2e, stalled database, slow upstream)', () => {
  let t: TestApp;
  let client: TestClient;
  let proxy: CountingProxy | undefined;
  let db: Client;

  beforeAll(async () => {
    t = await startTestApp(
      {
        ...CHECKOUT_TEST_ENV,
        CHECKOUT_LEASE_MS: String(LEASE_MS),
        UPSTREAM_SIGN_TIMEOUT_MS: '10000',
        UPSTREAM_READ_TIMEOUT_MS: '5000',
        UPSTREAM_DEADLINE_MS: '20000',
        UPSTREAM_MAX_ATTEMPTS: '4',
        CHECKOUT_REVALIDATE_TIMEOUT_MS: '5000',
      },
      {
        upstreamVia: async (sandboxUrl) => {
          proxy = await CountingProxy.start(sandboxUrl);
          return proxy.url;
        },
      },
    );
    client = await issueTestKey(t.app, ['orders:write']);
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await t?.close();
    await proxy?.close();
  });

  it('the drive stops signing at its lease deadline; the order still completes once, with the same key', async () => {
    const { listing, buyer } = market(t.sandbox, 'deadline-1');
    // The revalidation read is slow once (time to lock the new order's row before the drive signs); every
    // signing attempt is slow and fails with a retried 503.
    t.sandbox.admin.setFaults([
      { operation: 'listings', kind: 'latency', latencyMs: 800, times: 1 },
      { operation: 'signUser', kind: 'latency', latencyMs: SIGN_LATENCY_MS },
      { operation: 'signUser', kind: 'error', status: 503 },
    ]);
    const posted = await postOrder(t.app, client.key, 'deadline-1', orderBody(listing, buyer));
    expect(posted.status).toBe(202);

    // The stalled connection: this session holds the order's row, so the drive's fenced ledger insert (FOR SHARE)
    // and every commit of the order wait, and no worker can claim it (SKIP LOCKED) while it is held.
    await db.query('BEGIN');
    const locked = await db.query<{ lease_until_ms: string }>(
      `SELECT (extract(epoch FROM lease_until) * 1000)::bigint::text AS lease_until_ms
       FROM orders WHERE id = $1 FOR UPDATE`,
      [posted.body.id],
    );
    const leaseUntil = Number(locked.rows[0]?.lease_until_ms);
    expect(leaseUntil).toBeGreaterThan(0);
    const signings = (): number => proxy?.requests.filter((r) => r.path.endsWith(SIGNATURES)).length ?? 0;
    try {
      // The signing has started (its first attempt reached the upstream) before the lease ended.
      await waitUntil(() => signings() >= 1, 10_000, 20);
      // Held until well past the point where all 4 attempts would have been made without the deadline.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, leaseUntil - Date.now()) + 4 * SIGN_LATENCY_MS),
      );
    } finally {
      await db.query('COMMIT');
    }
    const sent = proxy?.requests.filter((r) => r.path.endsWith(SIGNATURES)) ?? [];
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(sent.filter((r) => r.at >= leaseUntil).map((r) => r.at - leaseUntil)).toEqual([]);

    // The upstream recovers: whoever holds the order now signs with the same key and buys once.
    t.sandbox.admin.clearFaults();
    const final = await waitFinal(t.app, client.key, posted.body.id, 30_000);
    expect(final.state).toBe('confirmed');
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
    const purchases = t.sandbox.admin
      .transactions()
      .filter((tx) => tx.instruction === 'accept_offer_v2' && tx.subject === buyer.subject);
    expect(purchases).toHaveLength(1);
  }, 90_000);
});
