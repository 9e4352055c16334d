import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProcessGroup } from '../../bench/chaos/processes';
import { SandboxProcess } from '../../bench/chaos/sandbox-process';
import { replicaEnv } from '../../bench/chaos/service-env';
import { ServiceReplica } from '../../bench/chaos/service-replica';
import { generateApiKey } from '../../src/auth/api-key';
import { buyerLockKey } from '../../src/checkout/order.repository';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

/** One answer, reduced to what the idempotency contract is about. */
interface Answer {
  status: number;
  code: string | null;
  /** The resource's id: the order's `id`, the transaction's `createdAt` + key (a signing may have no id yet). */
  id: string | null;
  replayed: boolean;
  retryAfter: string | null;
}

/** A request one replica is sent: path and body (the key is the pair's). */
interface Req {
  path: string;
  body: unknown;
}

const PAIRS = 12;
const isSuccess = (a: Answer): boolean => a.status >= 200 && a.status < 300;
const reused = (x: Answer): boolean => x.status === 422 && x.code === 'IDEMPOTENCY_KEY_REUSED';
const inFlight = (a: Answer): boolean => a.status === 409 && a.code === 'CONFLICT' && a.retryAfter !== null;

/** A cancel_listing_v1 batch signed by `address` (the sandbox checks ledger rules only when it lands). */
const cancelBatch = (eventId: string, ticketId: string, address: string) => ({
  platformInstructions: {
    instruction: 'cancel_listing_v1',
    params: [{ event_id: eventId, ticket_id: ticketId, canceller: address }],
  },
});

/**
 * Idempotency across replicas (issue 23 item 9): two real service processes on one database, each of a pair of
 * concurrent requests with one Idempotency-Key sent to a different replica. With different bodies the loser
 * gets 422 IDEMPOTENCY_KEY_REUSED (or 409 + Retry-After while the first is in flight), never a 5xx (a unique
 * violation escaping); with the same body both answers name the one stored resource. On every idempotent POST.
 */
describe('Idempotency-Key across two replicas (e2e: concurrent pairs, one to each replica)', () => {
  const group = new ProcessGroup();
  const apiKey = generateApiKey();
  let sandbox: SandboxProcess;
  let a: ServiceReplica;
  let b: ServiceReplica;
  let databaseUrl = '';
  let db: Client;
  let nextEvent = 8_400_000n;
  let run = 0;

  beforeAll(async () => {
    sandbox = await SandboxProcess.start(group, { seed: 'dupkey', landingDelayMs: 200 });
    databaseUrl = await createDatabaseFromTemplate(inject('databaseAdminUrl'));
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
    const env = () =>
      replicaEnv({
        databaseUrl,
        sandboxUrl: sandbox.url,
        apiKey,
        extra: {
          SYNC_ENABLED: 'false',
          SYNC_ON_STARTUP: 'false',
          RATE_LIMIT_LISTINGS_WRITE: '100000',
          RATE_LIMIT_TRANSACTIONS_WRITE: '100000',
          // Every request of a gated round holds a pooled connection while it waits at the gate.
          DB_POOL_SIZE: String(PAIRS + 10),
        },
      });
    a = await ServiceReplica.create('dupkey-a', group, env());
    b = await ServiceReplica.create('dupkey-b', group, env());
    // One after the other: both run migrations at boot (their race is another item of the issue).
    await a.start();
    await b.start();
  }, 180_000);
  afterAll(async () => {
    await group.stopAll();
    await db?.end();
    if (databaseUrl) await dropDatabase(inject('databaseAdminUrl'), databaseUrl);
  });

  const send = async (url: string, key: string, req: Req): Promise<Answer> => {
    const res = await fetch(`${url}${req.path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'idempotency-key': key,
        'content-type': 'application/json',
      },
      body: JSON.stringify(req.body),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await res.json()) as Record<string, unknown> & { error?: { code?: string } };
    const id =
      typeof body.id === 'string'
        ? body.id
        : typeof body.createdAt === 'string'
          ? `${String(body.idempotencyKey)}@${body.createdAt}`
          : null;
    return {
      status: res.status,
      code: body.error?.code ?? null,
      id,
      replayed: res.headers.get('idempotent-replayed') === 'true',
      retryAfter: res.headers.get('retry-after'),
    };
  };

  /**
   * Fires every pair at once, the first request of each to A and the second to B. With `gate` (advisory-lock keys
   * the requests take before their insert: checkout's per-buyer locks), the test holds those keys until every
   * request waits on one, then lets them all go at once, so each pair's two inserts really do run concurrently.
   */
  const race = async (
    table: 'orders' | 'ledger_transactions',
    make: (i: number) => Promise<[Req, Req]>,
    gate?: (reqs: Req[]) => Promise<bigint[]>,
  ): Promise<{ key: string; answers: [Answer, Answer]; stored: number }[]> => {
    run++;
    const pairs = await Promise.all(
      Array.from({ length: PAIRS }, async (_, i) => ({ key: `dup-${run}-${i}`, reqs: await make(i) })),
    );
    const held = gate ? await gate(pairs.flatMap((p) => p.reqs)) : [];
    for (const k of held) await db.query('SELECT pg_advisory_lock($1::bigint)', [k.toString()]);
    let answered: { key: string; answers: [Answer, Answer] }[];
    try {
      const pending = Promise.all(
        pairs.map(async ({ key, reqs }) => ({
          key,
          answers: await Promise.all<[Promise<Answer>, Promise<Answer>]>([
            send(a.url, key, reqs[0]),
            send(b.url, key, reqs[1]),
          ]),
        })),
      );
      pending.catch(() => undefined);
      if (held.length > 0)
        await waitUntil(
          async () => {
            const { rows } = await db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
            );
            return (rows[0]?.n ?? 0) >= 2 * PAIRS;
          },
          30_000,
          20,
        );
      await db.query('SELECT pg_advisory_unlock_all()');
      answered = await pending;
    } finally {
      await db.query('SELECT pg_advisory_unlock_all()');
    }
    const counts = await db.query<{ key: string; n: number }>(
      `SELECT idempotency_key AS key, count(*)::int AS n FROM ${table}
       WHERE idempotency_key = ANY($1::text[]) GROUP BY 1`,
      [answered.map((p) => p.key)],
    );
    const stored = new Map(counts.rows.map((r) => [r.key, r.n]));
    return answered.map((p) => ({ ...p, stored: stored.get(p.key) ?? 0 }));
  };

  type Results = Awaited<ReturnType<typeof race>>;

  /**
   * Different bodies, per pair: one stored resource, no 5xx, one success, and the other answer 422
   * IDEMPOTENCY_KEY_REUSED or 409 in flight (anything else is listed under `others`). Compared with `winners`.
   */
  const verdict = (results: Results) =>
    results.map(({ key, answers, stored }) => ({
      key,
      stored,
      errors5xx: answers.filter((x) => x.status >= 500),
      successes: answers.filter(isSuccess).length,
      others: answers.filter((x) => !isSuccess(x) && !reused(x) && !inFlight(x)),
    }));
  const winners = (results: Results) =>
    results.map(({ key }) => ({ key, stored: 1, errors5xx: [], successes: 1, others: [] }));

  /**
   * Same body, per pair: one stored resource, no 5xx, every answer a success or 409 in flight, every success
   * naming the one resource and at most one of them not a replay. Compared with `oneResource`.
   */
  const sameVerdict = (results: Results) =>
    results.map(({ key, answers, stored }) => {
      const wins = answers.filter(isSuccess);
      return {
        key,
        stored,
        errors5xx: answers.filter((x) => x.status >= 500),
        others: answers.filter((x) => !isSuccess(x) && !inFlight(x)),
        resources: new Set(wins.map((w) => w.id)).size,
        fresh: wins.filter((w) => !w.replayed).length <= 1,
      };
    });
  const oneResource = (results: Results) =>
    results.map(({ key }) => ({ key, stored: 1, errors5xx: [], others: [], resources: 1, fresh: true }));

  const newEvent = async (): Promise<string> => {
    const id = nextEvent++;
    await sandbox.createEvent(id);
    return id.toString();
  };
  const integratorAddress = async (subject: string): Promise<string> =>
    (await sandbox.admin<{ address: string }>('GET', `/wallets/integrators/${subject}`)).address;

  const orderBody = async (buyer: string, eventId: string, ticketId: string) => ({
    buyer_subject: buyer,
    buyer_address: await sandbox.userAddress(buyer),
    event_id: eventId,
    ticket_id: ticketId,
    expected_price_minor: '4000000',
  });
  /** A listed ticket per pair; the bodies differ in the buyer (so the two replicas take different buyer locks). */
  const orderPair = async (i: number, same: boolean): Promise<[Req, Req]> => {
    const eventId = await newEvent();
    const listing = await sandbox.seedListing(BigInt(eventId), 1n, `dup-seller-${i}`, 4_000_000n);
    const first = await orderBody(`dup-buyer-${run}-${i}-a`, eventId, listing.ticket_id);
    const second = same ? first : await orderBody(`dup-buyer-${run}-${i}-b`, eventId, listing.ticket_id);
    return [
      { path: '/v1/orders', body: first },
      { path: '/v1/orders', body: second },
    ];
  };

  /** The per-buyer advisory locks the order inserts take (checkout's OrderRepository.createOrGet). */
  const buyerLocks = async (reqs: Req[]): Promise<bigint[]> => {
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM api_clients`);
    const clientId = rows[0]?.id ?? '';
    const buyers = new Set(reqs.map((r) => (r.body as { buyer_subject: string }).buyer_subject));
    return [...buyers].map((buyer) => buyerLockKey(clientId, buyer));
  };

  it('POST /v1/orders, different bodies: one order, the other 422 IDEMPOTENCY_KEY_REUSED, no 5xx', async () => {
    const results = await race('orders', (i) => orderPair(i, false), buyerLocks);
    expect(verdict(results)).toEqual(winners(results));
  }, 120_000);

  it('POST /v1/orders, same body: one order, both answers name it', async () => {
    const results = await race('orders', (i) => orderPair(i, true), buyerLocks);
    expect(sameVerdict(results)).toEqual(oneResource(results));
  }, 120_000);

  for (const kind of ['users', 'integrators'] as const) {
    const signPair = async (i: number, same: boolean): Promise<[Req, Req]> => {
      const subject = `dup-signer-${i}`;
      const address =
        kind === 'users' ? await sandbox.userAddress(subject) : await integratorAddress(subject);
      const path = `/v1/wallets/${kind}/${subject}/signatures`;
      const eventId = await newEvent();
      return [
        { path, body: cancelBatch(eventId, '1', address) },
        { path, body: cancelBatch(eventId, same ? '1' : '2', address) },
      ];
    };
    it(`POST /v1/wallets/${kind}/{subject}/signatures, different bodies: one transaction, 422 for the other`, async () => {
      const results = await race('ledger_transactions', (i) => signPair(i, false));
      expect(verdict(results)).toEqual(winners(results));
    }, 120_000);
    it(`POST /v1/wallets/${kind}/{subject}/signatures, same body: one transaction`, async () => {
      const results = await race('ledger_transactions', (i) => signPair(i, true));
      expect(sameVerdict(results)).toEqual(oneResource(results));
    }, 120_000);
  }

  /** A ticket of its own per pair, owned by the seller; the bodies differ in the asking price. */
  const listPair = async (i: number, same: boolean): Promise<[Req, Req]> => {
    const seller = `dup-lister-${i}`;
    const eventId = await newEvent();
    await sandbox.admin('POST', '/tickets', {
      event_id: eventId,
      ticket_id: '1',
      owner: { kind: 'user', subject: seller },
    });
    const address = await sandbox.userAddress(seller);
    const body = (price: string) => ({
      seller_subject: seller,
      seller_address: address,
      event_id: eventId,
      ticket_id: '1',
      ask_price_minor: price,
      payout_ata: address,
      expires_at: String(Math.floor(Date.now() / 1000) + 3600),
    });
    return [
      { path: '/v1/listings', body: body('5000000') },
      { path: '/v1/listings', body: body(same ? '5000000' : '5000001') },
    ];
  };
  it('POST /v1/listings, different bodies: one transaction, the other 422, no 5xx', async () => {
    const results = await race('ledger_transactions', (i) => listPair(i, false));
    expect(verdict(results)).toEqual(winners(results));
  }, 120_000);
  it('POST /v1/listings, same body: one transaction', async () => {
    const results = await race('ledger_transactions', (i) => listPair(i, true));
    expect(sameVerdict(results)).toEqual(oneResource(results));
  }, 120_000);

  /** The bodies differ in the ticket of the path (the body is the same seller). */
  const cancelPair = async (i: number, same: boolean): Promise<[Req, Req]> => {
    const seller = `dup-canceller-${i}`;
    const eventId = await newEvent();
    const body = { seller_subject: seller, seller_address: await sandbox.userAddress(seller) };
    return [
      { path: `/v1/listings/${eventId}/1/cancel`, body },
      { path: `/v1/listings/${eventId}/${same ? 1 : 2}/cancel`, body },
    ];
  };
  it('POST /v1/listings/{event}/{ticket}/cancel, different bodies: one transaction, the other 422', async () => {
    const results = await race('ledger_transactions', (i) => cancelPair(i, false));
    expect(verdict(results)).toEqual(winners(results));
  }, 120_000);
  it('POST /v1/listings/{event}/{ticket}/cancel, same body: one transaction', async () => {
    const results = await race('ledger_transactions', (i) => cancelPair(i, true));
    expect(sameVerdict(results)).toEqual(oneResource(results));
  }, 120_000);
});
