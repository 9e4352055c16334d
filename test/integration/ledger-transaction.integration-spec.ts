import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ApiClientEntity } from '../../src/auth/api-client.entity';
import { LedgerTransactionEntity } from '../../src/transactions/ledger-transaction.entity';
import { LedgerTransactionRepository } from '../../src/transactions/ledger-transaction.repository';
import { durableWorkFor } from '../support/durable-work';
import { insertTestClient, openTestDataSource, type TestDataSource } from '../support/test-database';
import { pgPool } from '../../src/database/data-source';

describe(LedgerTransactionRepository.name, () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let sut: LedgerTransactionRepository;
  let clientId: string;

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), {
      poolSize: 8,
      entities: [ApiClientEntity, LedgerTransactionEntity],
    });
    dataSource = db.dataSource;
    clientId = await insertTestClient(dataSource, 'transactions:write');
    sut = new LedgerTransactionRepository(dataSource, durableWorkFor(dataSource), pgPool(dataSource));
  });
  afterAll(() => db?.close());

  const insert = (
    key: string,
    fingerprint = 'a'.repeat(64),
    onFinal: string | null = null,
    orderId: string | null = null,
  ) =>
    sut.insertOrGet(
      {
        clientId,
        idempotencyKey: key,
        upstreamIdempotencyKey: `up-${key}`,
        fingerprint,
        kind: 'user',
        subject: 'alice',
        instruction: 'cancel_listing_v1',
        request: '{"platformInstructions":{"instruction":"cancel_listing_v1","params":[]}}',
        requestId: null,
        onFinal,
        submitOnSign: false,
        orderId,
      },
      'owner-a',
      60_000,
      0,
    );

  it('inserts a key once: concurrent inserts of one key give one row and one winner', async () => {
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, () => insert(key)));
    expect(results.filter((r) => r.inserted)).toHaveLength(1);
    expect(new Set(results.map((r) => r.record.id)).size).toBe(1);
  });

  it('keeps the order a transaction belongs to beside its row (not a column: the ledger row type is unchanged); others have none', async () => {
    const orderId = randomUUID();
    const key = randomUUID();
    const withOrder = await insert(key, 'a'.repeat(64), null, orderId);
    const without = await insert(randomUUID());
    expect(withOrder.record.orderId).toBe(orderId);
    expect(without.record.orderId).toBeNull();
    // The same key again (a replay): the stored record, with its order.
    const replay = await insert(key, 'a'.repeat(64), null, orderId);
    expect(replay).toMatchObject({ inserted: false, record: { id: withOrder.record.id, orderId } });
    expect(await sut.orderIdOf(withOrder.record.id)).toBe(orderId);
    expect(await sut.orderIdOf(without.record.id)).toBeNull();
    const columns = await dataSource.query<{ column_name: string }[]>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'ledger_transactions'`,
    );
    expect(columns.map((c) => c.column_name)).not.toContain('order_id');
  });

  it('lets concurrent claimers take each due row at most once (SKIP LOCKED + lease)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const { record } = await insert(randomUUID());
      ids.push(record.id);
    }
    // Make them due now and unleased.
    await dataSource.query(
      `UPDATE ledger_transactions SET lease_until = NULL, lease_owner = NULL, next_attempt_at = now() - interval '1 s'
       WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const claims = await Promise.all(
      // Six claimers, as six replicas: each its own durable-work identity.
      Array.from({ length: 6 }, () =>
        new LedgerTransactionRepository(dataSource, durableWorkFor(dataSource), pgPool(dataSource)).claimDue(
          60_000,
          10,
          3_600_000,
        ),
      ),
    );
    const claimed = claims
      .flat()
      .map((r) => r.id)
      .filter((id) => ids.includes(id));
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.length).toBe(30);
    // Leased rows are not claimable again until the lease ends.
    expect((await sut.claimDue(60_000, 100, 3_600_000)).filter((r) => ids.includes(r.id))).toEqual([]);
  });

  it('keeps the history append-only', async () => {
    const { record } = await insert(randomUUID());
    await expect(
      dataSource.query(`UPDATE ledger_transaction_events SET detail = 'x' WHERE transaction_id = $1`, [
        record.id,
      ]),
    ).rejects.toThrow(/append-only/);
    await expect(
      dataSource.query(`DELETE FROM ledger_transaction_events WHERE transaction_id = $1`, [record.id]),
    ).rejects.toThrow(/append-only/);
    expect((await sut.history(record.id)).map((h) => h.type)).toEqual(['created']);
  });

  it('a tracker that stalls past its lease is fenced off: the row claimed again, its hand-back refused', async () => {
    const { record } = await insert(randomUUID());
    await dataSource.query(
      `UPDATE ledger_transactions SET lease_until = NULL, lease_owner = NULL, next_attempt_at = now() - interval '1 s'
       WHERE id = $1`,
      [record.id],
    );
    const stale = new LedgerTransactionRepository(dataSource, durableWorkFor(dataSource), pgPool(dataSource));
    const [claimedByA] = (await stale.claimDue(60_000, 100, 3_600_000)).filter((r) => r.id === record.id);
    // A stalls: its lease runs out, and B (another replica) claims the row under a new token.
    await dataSource.query(
      `UPDATE ledger_transactions SET lease_until = clock_timestamp() - interval '1 s',
         next_attempt_at = now() - interval '1 s' WHERE id = $1`,
      [record.id],
    );
    const [claimedByB] = (await sut.claimDue(60_000, 100, 3_600_000)).filter((r) => r.id === record.id);
    expect(BigInt(claimedByB.leaseToken ?? 0)).toBeGreaterThan(BigInt(claimedByA.leaseToken ?? 0));
    expect(await stale.release(record.id, claimedByA.leaseToken, 'a', new Date(), 'late')).toBe(false);
    expect(await sut.release(record.id, claimedByB.leaseToken, 'b', new Date(), 'done')).toBe(true);
    const history = await sut.history(record.id);
    expect(history.filter((h) => h.type === 'attempt').map((h) => h.detail)).toEqual(['done']);
  });

  it('counts each tracker claim of an unknown signing as a signing try (its backoff grows with it)', async () => {
    const { record } = await insert(randomUUID());
    expect(record.signAttempts).toBe(1);
    for (const expected of [2, 3]) {
      await dataSource.query(
        `UPDATE ledger_transactions SET lease_until = NULL, lease_owner = NULL, next_attempt_at = now() - interval '1 s'
         WHERE id = $1`,
        [record.id],
      );
      const [claimed] = (await sut.claimDue(60_000, 100, 3_600_000)).filter((r) => r.id === record.id);
      expect(claimed.signAttempts).toBe(expected);
    }
  });

  /** A confirmed row whose after-final handler is due now and unleased. */
  const finalDue = async (onFinal: string): Promise<string> => {
    const { record } = await insert(randomUUID(), 'a'.repeat(64), onFinal);
    await dataSource.query(
      `UPDATE ledger_transactions SET phase = 'signed', status = 'confirmed', final_at = now(),
         custodial_transaction_id = encode(sha256(id::text::bytea), 'hex'), signed_transaction = 'AAAA',
         lease_until = NULL, lease_owner = NULL, next_attempt_at = now() - interval '1 s'
       WHERE id = $1`,
      [record.id],
    );
    return record.id;
  };

  it('claims a pending after-final handler only for a replica that registered its name', async () => {
    const id = await finalDue(`handler-${randomUUID()}`);
    const name = (await sut.findById(id))?.onFinal ?? '';
    expect((await sut.claimDue(60_000, 100, 3_600_000, ['some-other'])).map((r) => r.id)).not.toContain(id);
    expect((await sut.claimDue(60_000, 100, 3_600_000)).map((r) => r.id)).not.toContain(id);
    const claimed = await sut.claimDue(60_000, 100, 3_600_000, ['some-other', name]);
    expect(claimed.map((r) => r.id)).toContain(id);
  });

  it('reads a record and its history as of one snapshot, while after-final runs are recorded', async () => {
    const id = await finalDue('h');
    const custodialId = (await sut.findById(id))?.custodialTransactionId ?? '';
    const runs = 40;
    const writer = (async () => {
      for (let k = 1; k <= runs; k++) await sut.recordOnFinal(id, 'a', `run ${k} failed`, 60_000);
    })();
    let reads = 0;
    const writing = { done: false };
    void writer.finally(() => (writing.done = true));
    // Bounded: the writer's 40 statements end; every read in between must agree with itself.
    while (!writing.done && reads < 10_000) {
      const found = await sut.findByCustodialIdWithHistory(custodialId);
      reads++;
      const last = found?.history.filter((h) => h.type === 'on_final').at(-1)?.detail ?? null;
      expect(found?.record.lastError ?? null).toBe(last);
      expect(found?.record.onFinalAttempts).toBe(found?.history.filter((h) => h.type === 'on_final').length);
    }
    await writer;
    const after = await sut.findByCustodialIdWithHistory(custodialId.toUpperCase());
    expect(after?.record.lastError).toBe(`run ${runs} failed`);
    expect(after?.history).toEqual(await sut.history(id));
    expect(reads).toBeGreaterThan(0);
    expect(await sut.findByCustodialIdWithHistory('f'.repeat(64))).toBeNull();
  });

  it('counts after-final runs: a failure is due again, a give-up schedules nothing and says so, done is done', async () => {
    const id = await finalDue('h');
    await sut.recordOnFinal(id, 'a', 'refresh failed', 60_000);
    let row = await sut.findById(id);
    expect(row).toMatchObject({ onFinalAttempts: 1, onFinalDoneAt: null, lastError: 'refresh failed' });
    expect(row?.nextAttemptAt?.getTime()).toBeGreaterThan(Date.now() + 30_000);

    await sut.recordOnFinal(id, 'b', 'refresh failed again', null);
    row = await sut.findById(id);
    expect(row).toMatchObject({
      onFinalAttempts: 2,
      onFinalDoneAt: null,
      nextAttemptAt: null,
      lastError: 'after-final handler gave up after 2 tries: refresh failed again',
      status: 'confirmed',
    });
    const runs = (await sut.history(id)).filter((h) => h.type === 'on_final').map((h) => h.detail);
    expect(runs).toEqual([
      'refresh failed',
      'after-final handler gave up after 2 tries: refresh failed again',
    ]);

    const other = await finalDue('h');
    await sut.recordOnFinal(other, 'a', null, null);
    row = await sut.findById(other);
    expect(row).toMatchObject({ onFinalAttempts: 1, nextAttemptAt: null, lastError: null });
    expect(row?.onFinalDoneAt).toBeInstanceOf(Date);
    expect((await sut.history(other)).filter((h) => h.type === 'on_final').map((h) => h.detail)).toEqual([
      'done',
    ]);
  });
});
