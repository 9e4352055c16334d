import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDataSourceOptions } from '../../src/database/data-source';
import { CREATE_SQL, OrderRepository, type NewOrder } from '../../src/checkout/order.repository';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

const LIMITS = { maxOpen: 2, maxPerEvent: 2, windowSeconds: 3600 };
const EVENT = 7_000_001n;

describe(OrderRepository.name, () => {
  let adminUrl: string;
  let databaseUrl: string;
  let dataSource: DataSource;
  let sut: OrderRepository;
  let clientId: string;
  let keys = 0;

  beforeAll(async () => {
    adminUrl = inject('databaseAdminUrl');
    databaseUrl = await createDatabaseFromTemplate(adminUrl);
    dataSource = new DataSource({
      ...buildDataSourceOptions({ url: databaseUrl, poolSize: 4 }),
      entities: [],
    });
    await dataSource.initialize();
    const [row] = await dataSource.query<{ id: string }[]>(
      `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
       VALUES ('t', 'trb_live_abcdefghij', decode(repeat('ab', 32), 'hex'), '{orders:write}') RETURNING id`,
    );
    clientId = row.id;
    sut = new OrderRepository(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await dropDatabase(adminUrl, databaseUrl);
  });

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

  /** `count` confirmed orders of `buyer`, each for its own event (none is open, none is in EVENT). */
  const history = (buyer: string, count: number) =>
    dataSource.query(
      `INSERT INTO orders (client_id, idempotency_key, fingerprint, buyer_subject, buyer_address, event_id,
         ticket_id, expected_price_minor, state, recovery_point, final_at)
       SELECT $1, 'old-' || $2 || '-' || g, repeat('a', 64), $2, 'addr', 8000000 + g, 1, 1000, 'confirmed', 'done',
         clock_timestamp()
       FROM generate_series(1, $3) g`,
      [clientId, buyer, count],
    );

  it("counts the buyer's open orders and this event's orders, never the buyer's final history", async () => {
    await history('hist', 300);
    expect((await sut.createOrGet(order('hist'), 'test', 60_000, LIMITS)).kind).toBe('inserted');
    expect((await sut.createOrGet(order('hist', EVENT + 1n), 'test', 60_000, LIMITS)).kind).toBe('inserted');
    // Two open orders: the third is refused whatever its event.
    expect(await sut.createOrGet(order('hist', EVENT + 2n), 'test', 60_000, LIMITS)).toEqual({
      kind: 'open_limit',
      open: 2,
    });
    // The open ones end; EVENT already has one order of this buyer in the window, the limit is two.
    await dataSource.query(
      `UPDATE orders SET state = 'confirmed' WHERE buyer_subject = 'hist' AND state = 'created'`,
    );
    expect((await sut.createOrGet(order('hist', EVENT, 2n), 'test', 60_000, LIMITS)).kind).toBe('inserted');
    await dataSource.query(
      `UPDATE orders SET state = 'confirmed' WHERE buyer_subject = 'hist' AND state = 'created'`,
    );
    expect((await sut.createOrGet(order('hist', EVENT, 3n), 'test', 60_000, LIMITS)).kind).toBe(
      'event_limit',
    );
  });

  it('reads no more of the table for a buyer with 3,000 past orders than for one with 30', async () => {
    // Buffers the create statement touches (index and heap pages), run and rolled back: the limit counts
    // used to read every past order of the buyer.
    const buffersFor = async (buyer: string): Promise<number> => {
      const runner = dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.query('BEGIN');
        const next = order(buyer, EVENT + 10n);
        const values: unknown[] = [
          clientId,
          next.idempotencyKey,
          next.fingerprint,
          null,
          buyer,
          next.buyerAddress,
          next.eventId.toString(),
          '1',
          '1000',
          'test',
          60_000,
          3600,
          100,
          100,
        ];
        const [{ 'QUERY PLAN': plan }] = await runner.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${CREATE_SQL}`,
          values,
        );
        await runner.query('ROLLBACK');
        const root = (plan as { Plan: Record<string, number> }[])[0].Plan;
        return root['Shared Hit Blocks'] + root['Shared Read Blocks'];
      } finally {
        await runner.release();
      }
    };
    await history('small', 30);
    await history('large', 3000);
    await dataSource.query('ANALYZE orders');
    const small = await buffersFor('small');
    const large = await buffersFor('large');
    expect(small).toBeGreaterThan(0);
    // 3,000 orders fill ~100 heap pages; reading them would add at least that many buffers.
    expect(large).toBeLessThan(small + 20);
  });
});
