import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key';
import { spawnService, waitForExit, type ServiceProcess } from '../support/service-process';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';
import { TEST_DEPLOYMENT_ENV } from '../../bench/chaos/service-env';

const SANDBOX_KEY = 'trk_test_sandbox_full_access_0000000000000001';
const ADMIN_KEY = 'sandbox-admin-local-only';

/** The sandbox as its own process, so it survives `kill -9` of the service (its ledger is the truth). */
async function startSandboxProcess(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['dist/src/sandbox/sandbox.main.js'], {
    env: {
      PATH: process.env.PATH ?? '',
      SANDBOX_PORT: '0',
      SANDBOX_EVENTS: '2',
      SANDBOX_LISTINGS: '5',
      SANDBOX_LANDING_DELAY_MS: '5000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  await waitUntil(() => /listening on http:\/\/\S+/.test(out), 20_000, 50);
  return { child, url: /listening on (http:\/\/\S+)/.exec(out)?.[1] as string };
}

describe('Transactions across crashes and replicas (e2e, service and sandbox as processes)', () => {
  let sandbox: { child: ChildProcess; url: string };
  let databaseUrl = '';
  let db: Client;
  const adminKey = generateApiKey();
  const services: ServiceProcess[] = [];
  let nextId = 900_000;

  const admin = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${sandbox.url}/__sandbox${path}`, {
      method,
      headers: { 'x-sandbox-admin-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300)
      throw new Error(`sandbox admin ${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const start = async (extra: Record<string, string> = {}): Promise<ServiceProcess> => {
    const service = await spawnService(
      {
        NODE_ENV: 'test',
        ...TEST_DEPLOYMENT_ENV,
        DATABASE_URL: databaseUrl,
        UPSTREAM_BASE_URL: sandbox.url,
        UPSTREAM_API_KEY: SANDBOX_KEY,
        BFF_BOOTSTRAP_API_KEY: adminKey,
        TX_TRACKER_INTERVAL_MS: '100',
        TX_LEASE_MS: '2000',
        TX_RESUBMIT_BASE_DELAY_MS: '100',
        TX_RESUBMIT_MAX_DELAY_MS: '300',
        RATE_LIMIT_LISTINGS_WRITE: '100000',
        ...extra,
      },
      // Two services, a sandbox and PostgreSQL share a loaded machine in CI: starting may be slow.
      90_000,
    );
    services.push(service);
    return service;
  };
  /** A fresh ticket owned by user `bob` (not listed) and the POST /v1/listings body that lists it. */
  const listingBody = async (): Promise<Record<string, unknown>> => {
    const eventId = String(nextId++);
    await admin('POST', '/events', { event_id: eventId });
    await admin('POST', '/tickets', {
      event_id: eventId,
      ticket_id: '1',
      owner: { kind: 'user', subject: 'bob' },
    });
    const bob = await admin('GET', '/wallets/users/bob');
    return {
      seller_subject: 'bob',
      seller_address: bob.address,
      event_id: eventId,
      ticket_id: '1',
      ask_price_minor: '5000000',
      payout_ata: bob.address,
      expires_at: String(Math.floor(Date.now() / 1000) + 3600),
    };
  };
  const list = (service: ServiceProcess, body: unknown, key: string): Promise<Response> =>
    fetch(`${service.url}/v1/listings`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${adminKey}`,
        'idempotency-key': key,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    });
  const rows = async (): Promise<
    { id: string; custodial_transaction_id: string | null; status: string | null }[]
  > =>
    (
      await db.query<{ id: string; custodial_transaction_id: string | null; status: string | null }>(
        `SELECT id, custodial_transaction_id, status FROM ledger_transactions ORDER BY created_at`,
      )
    ).rows;
  const FINAL = ['confirmed', 'landed_with_error', 'expired'];

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    databaseUrl = await createDatabaseFromTemplate(inject('databaseAdminUrl'));
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    for (const s of services) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM');
        await waitForExit(s.child, 15_000).catch(() => s.child.kill('SIGKILL'));
      }
    }
    await db?.end();
    if (databaseUrl) await dropDatabase(inject('databaseAdminUrl'), databaseUrl);
    sandbox?.child.kill('SIGTERM');
    if (sandbox) await waitForExit(sandbox.child, 10_000).catch(() => sandbox.child.kill('SIGKILL'));
  });

  it('kill -9 with transactions in flight, then a restart: every transaction final and as the sandbox says', async () => {
    const first = await start();
    const before = Number((await admin('GET', '/state')).transactions);
    // Submitted and still landing (5 s) when the service dies.
    for (let i = 0; i < 5; i++)
      expect((await list(first, await listingBody(), `crash-${i}`)).status).toBe(202);
    // Two more die while signing (the upstream is slow to answer them).
    await admin('POST', '/faults', { operation: 'signUser', kind: 'latency', latencyMs: 1200, times: 2 });
    const dying = [await listingBody(), await listingBody()].map((body, i) =>
      list(first, body, `crash-signing-${i}`).catch(() => null),
    );
    await waitUntil(async () => (await rows()).length === 7, 10_000, 50);
    first.child.kill('SIGKILL');
    await waitForExit(first.child, 10_000);
    await Promise.all(dying);
    // At least the two signings were cut off (no status yet); the submissions may have landed meanwhile.
    expect((await rows()).filter((r) => r.status === null).length).toBeGreaterThanOrEqual(2);

    const second = await start();
    await waitUntil(
      async () => (await rows()).every((r) => r.status !== null && FINAL.includes(r.status)),
      60_000,
      200,
    );
    const final = await rows();
    expect(final).toHaveLength(7);
    for (const row of final) {
      const upstream = await admin('GET', `/transactions/${row.custodial_transaction_id}`);
      expect(upstream.state).toBe(row.status);
      expect(row.status).toBe('confirmed');
    }
    // Nothing was signed twice: one upstream transaction per record.
    expect(Number((await admin('GET', '/state')).transactions)).toBe(before + 7);
    second.child.kill('SIGTERM');
    expect(await waitForExit(second.child, 15_000)).toBe(0);
  }, 180_000);

  it('two replicas on one database: each transaction worked by one replica at a time, both working', async () => {
    const replicas = [await start({ TX_TRACKER_BATCH: '1' }), await start({ TX_TRACKER_BATCH: '1' })];
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await list(replicas[i % 2], await listingBody(), `replica-${i}`);
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { custodialTransactionId: string }).custodialTransactionId);
    }
    const finalOf = async (): Promise<number> =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM ledger_transactions WHERE custodial_transaction_id = ANY($1) AND final_at IS NOT NULL`,
          [ids],
        )
      ).rows[0].n as number;
    await waitUntil(async () => (await finalOf()) === ids.length, 60_000, 200);
    const attempts = (
      await db.query<{ transaction_id: string; actor: string; started_at: Date; at: Date }>(
        `SELECT e.transaction_id, e.actor, e.started_at, e.at FROM ledger_transaction_events e
         JOIN ledger_transactions t ON t.id = e.transaction_id
         WHERE e.type = 'attempt' AND t.custodial_transaction_id = ANY($1) ORDER BY e.transaction_id, e.started_at`,
        [ids],
      )
    ).rows;
    expect(new Set(attempts.map((a) => a.actor)).size).toBe(2);
    for (let i = 1; i < attempts.length; i++) {
      const [a, b] = [attempts[i - 1], attempts[i]];
      if (a.transaction_id !== b.transaction_id) continue;
      // The next attempt on a transaction starts only after the previous one ended (no overlap).
      expect(b.started_at.getTime()).toBeGreaterThanOrEqual(a.at.getTime());
    }
  }, 180_000);

  it('a tracker frozen past its lease (SIGSTOP mid-call) is fenced off when it wakes: the other replica finished it', async () => {
    // Only A and B may work this row: the replicas earlier tests left running would claim it too (and the test
    // could then freeze A while another replica, not A, held the row).
    for (const s of services.splice(0)) {
      if (s.child.exitCode !== null || s.child.signalCode !== null) continue;
      s.child.kill('SIGTERM');
      await waitForExit(s.child, 15_000).catch(() => s.child.kill('SIGKILL'));
    }
    const a = await start({ TX_TRACKER_BATCH: '1' });
    const before = Number((await admin('GET', '/state')).transactions);
    const res = await list(a, await listingBody(), 'zombie-tracker');
    expect(res.status).toBe(202);
    const { custodialTransactionId } = (await res.json()) as { custodialTransactionId: string };
    const lease = async () =>
      (
        await db.query<{ token: string | null; held: boolean }>(
          `SELECT lease_token::text AS token, lease_owner IS NOT NULL AS held
           FROM ledger_transactions WHERE custodial_transaction_id = $1`,
          [custodialTransactionId],
        )
      ).rows[0];
    // A's tracker's next re-send is held 6 s by the sandbox: a claim (held: not handed back) that outlives a quick
    // one and its own 2 s lease, whatever the machine's load does to this test's polls.
    await admin('POST', '/faults', { operation: 'submit', kind: 'latency', latencyMs: 6000, times: 1 });
    let held: string | null = null;
    await waitUntil(
      async () => {
        const first = await lease();
        if (!first.held) return false;
        await new Promise((r) => setTimeout(r, 300));
        const again = await lease();
        held = again.held && again.token === first.token ? first.token : null;
        return held !== null;
      },
      15_000,
      20,
    );
    a.child.kill('SIGSTOP');
    try {
      // A's lease (2 s) runs out while it is frozen; B claims the row under a new token and finishes it.
      const b = await start({ TX_TRACKER_BATCH: '1' });
      await waitUntil(
        async () =>
          (
            await db.query(
              `SELECT 1 FROM ledger_transactions WHERE custodial_transaction_id = $1 AND final_at IS NOT NULL`,
              [custodialTransactionId],
            )
          ).rows.length === 1,
        60_000,
        200,
      );
      expect(BigInt((await lease()).token ?? 0)).toBeGreaterThan(BigInt(held ?? 0));
      expect(b.output()).toMatch(/durable work lease expired, taken over/);
      expect(b.child.exitCode).toBeNull();
    } finally {
      a.child.kill('SIGCONT');
    }
    // A's held call completes and its attempt ends (an after-final handler may run first: it refreshes the
    // event, which on a loaded machine takes a while); its hand-back is then refused by its stale token.
    await waitUntil(
      () =>
        a
          .output()
          .split('\n')
          .some((l) => l.includes('ledger_transactions') && l.includes('fenced off')),
      60_000,
      100,
    );
    const [row] = (
      await db.query<{ status: string }>(
        `SELECT status FROM ledger_transactions WHERE custodial_transaction_id = $1`,
        [custodialTransactionId],
      )
    ).rows;
    expect(row.status).toBe('confirmed');
    expect((await admin('GET', `/transactions/${custodialTransactionId}`)).state).toBe('confirmed');
    expect(Number((await admin('GET', '/state')).transactions)).toBe(before + 1);
  }, 180_000);
});
