import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CREATE_SQL, OrderRepository, type NewOrder } from '../../src/checkout/order.repository';
import { CheckoutConfig } from '../../src/config/checkout.config';
import { durableWorkFor } from '../support/durable-work';
import { insertTestClient, openTestDataSource, type TestDataSource } from '../support/test-database';
import { pgPool } from '../../src/database/data-source';

/** No fair-share cap in the way of tests about other things (fair-claims.integration-spec.ts tests the caps). */
const uncapped = Object.assign(new CheckoutConfig(), { CHECKOUT_CLIENT_MAX_IN_FLIGHT: 10_000 });
const LIMITS = { maxOpen: 2, maxPerEvent: 2, windowSeconds: 3600 };
const EVENT = 7_000_001n;

describe(OrderRepository.name, () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let sut: OrderRepository;
  let clientId: string;
  let keys = 0;

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 4 });
    dataSource = db.dataSource;
    clientId = await insertTestClient(dataSource, 'orders:write');
    sut = new OrderRepository(dataSource, durableWorkFor(dataSource), uncapped, pgPool(dataSource));
  });
  afterAll(() => db?.close());

  const order = (buyer: string, eventId = EVENT, ticketId = 1n): NewOrder => ({
    clientId,
    idempotencyKey: `k-${++keys}`,
    fingerprint: 'a'.repeat(64),
    requestId: null,
    buyerSubject: buyer,
    buyerAddress: 'BuyerAddress1111111111111111111111111111111',
    eventId,
    ticketId,
    expectedPriceMinor: 1_000n,
  });
  const create = (next: NewOrder) => sut.createOrGet(next, 'test', 60_000, LIMITS);
  const finish = (buyer: string, state: string) =>
    dataSource.query(`UPDATE orders SET state = $2 WHERE buyer_subject = $1 AND state = 'created'`, [
      buyer,
      state,
    ]);

  /** `count` past orders of `buyer` in `state`, `ageSeconds` old, each for its own event (none is EVENT) or all for `event`. */
  const history = (
    buyer: string,
    count: number,
    { state = 'confirmed', event = null as bigint | null, ageSeconds = 0, tag = 'h' } = {},
  ) =>
    dataSource.query(
      `INSERT INTO orders (client_id, idempotency_key, fingerprint, buyer_subject, buyer_address, event_id,
         ticket_id, expected_price_minor, state, recovery_point, final_at, created_at)
       SELECT $1, $2 || '-' || $6 || '-' || g, repeat('a', 64), $2, 'addr', coalesce($5::bigint, 8000000 + g), g,
         1000, $4, CASE WHEN $4 = 'created' THEN 'revalidate' ELSE 'done' END,
         CASE WHEN $4 = 'created' THEN NULL ELSE clock_timestamp() END,
         clock_timestamp() - make_interval(secs => $7)
       FROM generate_series(1, $3) g`,
      [clientId, buyer, count, state, event?.toString() ?? null, tag, ageSeconds],
    );

  it('calls onSent once the create statement is on the wire, before its answer: for a new order and a replay', async () => {
    const next = order('on-sent-buyer');
    for (const expected of ['inserted', 'existing'] as const) {
      const seen: string[] = [];
      const creating = sut
        .createOrGet(next, 'test', 60_000, LIMITS, () => seen.push('sent'))
        .then((result) => {
          seen.push(result.kind);
          return result;
        });
      const result = await creating;
      expect(result.kind).toBe(expected);
      expect(seen).toEqual(['sent', expected]);
    }
  });

  it('refuses at the open-orders limit, whatever the event, and counts no final order towards it', async () => {
    await history('open', 300);
    expect((await create(order('open'))).kind).toBe('inserted');
    expect((await create(order('open', EVENT + 1n))).kind).toBe('inserted');
    expect(await create(order('open', EVENT + 2n))).toEqual({ kind: 'open_limit', open: 2 });
    // Over the limit (it was lowered meanwhile): still refused; the count stops at the limit.
    await history('open', 3, { state: 'created', tag: 'more' });
    expect(await create(order('open', EVENT + 3n))).toEqual({ kind: 'open_limit', open: 2 });
  });

  it('counts the open and confirmed orders of the event inside the window, nothing else', async () => {
    for (const state of ['rejected', 'failed', 'landed_with_error']) {
      expect((await create(order('event'))).kind).toBe('inserted');
      await finish('event', state);
    }
    await history('event', 5, { event: EVENT, ageSeconds: 2 * LIMITS.windowSeconds, tag: 'old' });
    await history('event', 300);
    expect((await create(order('event', EVENT, 2n))).kind).toBe('inserted');
    await finish('event', 'confirmed');
    expect((await create(order('event', EVENT, 3n))).kind).toBe('inserted');
    // One confirmed and one open order of the event in the window: its limit of two is reached.
    expect(await create(order('event', EVENT, 4n))).toEqual({ kind: 'event_limit', count: 2 });
  });

  it('plans the counts on their indexes and reads no more for a buyer with 3,000 past orders than with 30', async () => {
    // As production runs it: prepared, and (forced here) on its generic plan. Run and rolled back.
    const planFor = async (buyer: string): Promise<{ buffers: number; text: string }> => {
      const runner = dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.query('BEGIN');
        await runner.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
        await runner.query(`PREPARE t_orders_create AS ${CREATE_SQL}`);
        const key = `plan-${++keys}`;
        const [{ 'QUERY PLAN': plan }] = await runner.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE t_orders_create('${clientId}', '${key}',
             '${'a'.repeat(64)}', NULL, '${buyer}', 'addr', '${EVENT + 10n}', '1', '1000', 'test', 60000, 3600, 100, 100)`,
        );
        await runner.query('ROLLBACK');
        await runner.query('DEALLOCATE t_orders_create');
        const root = (plan as { Plan: Record<string, number> }[])[0].Plan;
        return {
          buffers: root['Shared Hit Blocks'] + root['Shared Read Blocks'],
          text: JSON.stringify(plan),
        };
      } finally {
        await runner.release();
      }
    };
    await history('small', 30);
    await history('large', 3000);
    await dataSource.query('ANALYZE orders');
    const small = await planFor('small');
    const large = await planFor('large');
    expect(large.text).toContain('"Index Name":"orders_buyer_open_idx"');
    expect(large.text).toContain('"Index Name":"orders_buyer_idx"');
    expect(small.buffers).toBeGreaterThan(0);
    // 3,000 orders fill ~100 heap pages: reading them would add at least that many buffers. (Counting over the
    // buyer's rows as before read ~125 for either buyer on the generic plan: the whole table.)
    expect(large.buffers).toBeLessThan(small.buffers + 20);
    expect(large.buffers).toBeLessThan(60);
  });

  const inserted = async (buyer: string) => {
    const created = await create(order(buyer, 7_000_900n));
    if (created.kind !== 'inserted') throw new Error(`not inserted: ${created.kind}`);
    return created.order;
  };
  const expire = (id: string) =>
    dataSource.query(
      `UPDATE orders SET lease_until = clock_timestamp() - interval '1 s', next_attempt_at = clock_timestamp() - interval '1 s'
       WHERE id = $1`,
      [id],
    );
  const audit = { steps: [{ step: 'revalidated' }] };
  const expect0 = { state: 'created' as const, attempt: 1 };

  it('two drives of one order in one process cannot both commit: each claim has its own token', async () => {
    const first = await inserted('zombie-a');
    expect(first.leaseToken).toMatch(/^[1-9][0-9]*$/);
    // The first drive stalls past its lease; the same process claims the order again (a wake-up).
    await expire(first.id);
    const second = await sut.claimOne(first.id, 60_000);
    expect(second).not.toBeNull();
    expect(BigInt(second?.leaseToken ?? 0)).toBeGreaterThan(BigInt(first.leaseToken ?? 0));
    const owner = 'same-process';
    const stale = await sut.commit(first.id, { owner, token: first.leaseToken }, expect0, {}, audit, 60_000);
    expect(stale).toBeNull();
    expect(await sut.release(first.id, { owner, token: first.leaseToken }, 0, 'late')).toBe(false);
    const current = await sut.commit(
      first.id,
      { owner, token: second?.leaseToken ?? null },
      expect0,
      { state: 'revalidated' },
      audit,
      60_000,
    );
    expect(current?.state).toBe('revalidated');
    expect((await sut.steps(first.id)).map((s) => s.step)).toEqual(['created', 'revalidated']);
  });

  it('concurrent claimers (replicas) take each due order at most once, each under a new token', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await inserted(`claimer-${i}`)).id);
    for (const id of ids) await expire(id);
    const claims = await Promise.all(
      Array.from({ length: 4 }, () =>
        new OrderRepository(dataSource, durableWorkFor(dataSource), uncapped, pgPool(dataSource)).claimDue(
          60_000,
          5,
        ),
      ),
    );
    const claimed = claims.flat().filter((o) => ids.includes(o.id));
    expect(new Set(claimed.map((o) => o.id)).size).toBe(claimed.length);
    expect(claimed).toHaveLength(12);
    expect(new Set(claimed.map((o) => o.leaseToken)).size).toBe(12);
    expect((await sut.claimDue(60_000, 100)).filter((o) => ids.includes(o.id))).toEqual([]);
  });
});
