import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { batchFromWire } from '../../src/checkout/checkout.integrator';
import { AppError } from '../../src/common/app-error';
import { TransactionsService, type SignInput } from '../../src/transactions/transactions.service';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import { CHECKOUT_TEST_ENV, revalidatedMarket, untilOwnedBy } from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

/**
 * TransactionsService.signAndSend (checkout's first signing): the record is committed before the signing call,
 * the signed bytes go out as soon as they are back, the first answer is recorded alongside the caller's own
 * commit; a replayed key signs nothing new; a refused signing sends nothing.
 */
describe(`${TransactionsService.name}.signAndSend (e2e, sandbox upstream)`, () => {
  let t: TestApp;
  let client: TestClient;
  let sut: TransactionsService;
  let n = 0;

  beforeAll(async () => {
    t = await startTestApp(
      { ...CHECKOUT_TEST_ENV, CHECKOUT_WORKER_ENABLED: 'false', TX_TRACKER_ENABLED: 'false' },
      { sandbox: { landingDelayMs: 50 } },
    );
    client = await issueTestKey(t.app, ['orders:write']);
    sut = t.app.get(TransactionsService);
  });
  afterEach(() => t.sandbox.admin.clearFaults());
  afterAll(async () => {
    await t?.close();
  });

  /** A purchase of a fresh listing as checkout would sign it. */
  async function purchase(): Promise<{
    input: SignInput;
    listing: { eventId: bigint; ticketId: bigint };
    buyerAddress: string;
  }> {
    const { listing, buyer, batch } = await revalidatedMarket(t.app, t.sandbox, `sas-${++n}`);
    return {
      listing,
      buyerAddress: buyer.address,
      input: {
        clientId: client.id,
        idempotencyKey: `sas:${randomUUID()}`,
        kind: 'user',
        subject: buyer.subject,
        batch: batchFromWire(batch),
      },
    };
  }

  it('signs, sends at once and records the first answer alongside the caller, once; the purchase lands', async () => {
    const { input, listing, buyerAddress } = await purchase();
    const before = t.sandbox.admin.stats().transactions;
    const alongside: { id: string; phase: string; status: string | null }[] = [];
    const onSigned: number[] = [];
    const result = await sut.signAndSend(input, {
      hooks: {
        finalHandler: 'test.unregistered',
        afterFinal: () => Promise.resolve(),
        signed: () => onSigned.push(alongside.length),
        alongsideAnswer: (_call, record, answer) => {
          alongside.push({ id: record.id, phase: record.phase, status: answer.status });
          return Promise.resolve();
        },
      },
      call: undefined,
    });
    expect(result.replayed).toBe(false);
    expect(t.sandbox.admin.stats().transactions).toBe(before + 1);
    expect(onSigned).toEqual([0]);
    expect(alongside).toEqual([{ id: result.record.id, phase: 'signed', status: 'processing' }]);
    if ('error' in result.sent) throw result.sent.error;
    expect(result.sent.answered).toBe(true);
    expect(result.sent.record).toMatchObject({ phase: 'signed', status: 'processing', submitAttempts: 1 });
    expect((result.sent.record as unknown as { submittedAt: Date | null }).submittedAt).not.toBeNull();
    const history = (await sut.history(result.record.id)).map((e) => e.type);
    expect(history).toEqual(['created', 'signed', 'submitted', 'status']);
    await untilOwnedBy(t.sandbox, listing, buyerAddress);
  });

  it('the same key again: the stored transaction, nothing new signed, the same bytes sent', async () => {
    const { input } = await purchase();
    const first = await sut.signAndSend(input);
    const before = t.sandbox.admin.stats().transactions;
    const again = await sut.signAndSend(input);
    expect(again.replayed).toBe(true);
    expect(again.record.custodialTransactionId).toBe(first.record.custodialTransactionId);
    expect(t.sandbox.admin.stats().transactions).toBe(before);
    if ('error' in again.sent) throw again.sent.error;
    expect(again.sent.answered).toBe(true);
  });

  /** Runs `body` while another connection holds a lock that makes every insert into the ledger wait. */
  async function withLedgerInsertsBlocked<T>(body: () => Promise<T>): Promise<T> {
    const runner = t.app.get(DataSource).createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query('LOCK TABLE ledger_transactions IN SHARE ROW EXCLUSIVE MODE');
      return await body();
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  }

  const rowsWithKey = async (key: string): Promise<number> =>
    Number(
      (
        await t.app
          .get(DataSource)
          .query<{ n: string }[]>(
            'SELECT count(*) AS n FROM ledger_transactions WHERE idempotency_key = $1',
            [key],
          )
      )[0].n,
    );

  it('signAlongsideInsert: the signing call leaves while the record is inserted; nothing is sent before it commits', async () => {
    const { input, listing, buyerAddress } = await purchase();
    const before = t.sandbox.admin.stats().transactions;
    let result: Promise<Awaited<ReturnType<TransactionsService['signAndSend']>>> | undefined;
    await withLedgerInsertsBlocked(async () => {
      result = sut.signAndSend({ ...input, signAlongsideInsert: true });
      await waitUntil(() => Promise.resolve(t.sandbox.admin.stats().transactions === before + 1), 5_000, 10);
      // Signed upstream while the record waits; the signed bytes wait with it.
      expect(await rowsWithKey(input.idempotencyKey)).toBe(0);
      expect(t.sandbox.admin.transactions({ state: 'signed' }).map((x) => x.idempotencyKey)).toContain(
        sut.upstreamKeyFor(client.id, input.idempotencyKey),
      );
    });
    const done = await (result as NonNullable<typeof result>);
    expect(done.replayed).toBe(false);
    if ('error' in done.sent) throw done.sent.error;
    expect(done.sent.answered).toBe(true);
    expect((await sut.history(done.record.id)).map((e) => e.type)).toEqual([
      'created',
      'signed',
      'submitted',
      'status',
    ]);
    expect(t.sandbox.admin.stats().transactions).toBe(before + 1);
    await untilOwnedBy(t.sandbox, listing, buyerAddress);
  });

  it('without signAlongsideInsert the signing call waits for the record to commit', async () => {
    const { input } = await purchase();
    const before = t.sandbox.admin.stats().transactions;
    let result: Promise<unknown> | undefined;
    await withLedgerInsertsBlocked(async () => {
      result = sut.signAndSend(input);
      await sleep(300);
      expect(t.sandbox.admin.stats().transactions).toBe(before);
    });
    await result;
    expect(t.sandbox.admin.stats().transactions).toBe(before + 1);
  });

  it('signAlongsideInsert with a key already in the ledger: the stored transaction, nothing new signed', async () => {
    const { input } = await purchase();
    const first = await sut.signAndSend(input);
    const before = t.sandbox.admin.stats().transactions;
    const again = await sut.signAndSend({ ...input, signAlongsideInsert: true });
    expect(again.replayed).toBe(true);
    expect(again.record.custodialTransactionId).toBe(first.record.custodialTransactionId);
    expect(t.sandbox.admin.stats().transactions).toBe(before);
  });

  it('a refused signing (the buyer is not the subject wallet: 403) throws UPSTREAM_REJECTED, sends nothing', async () => {
    const { input: mine } = await purchase();
    const { input: theirs } = await purchase();
    const input: SignInput = { ...mine, subject: theirs.subject };
    let answers = 0;
    const error = await sut
      .signAndSend(input, {
        hooks: {
          finalHandler: 'test.unregistered',
          afterFinal: () => Promise.resolve(),
          alongsideAnswer: () => {
            answers++;
            return Promise.resolve();
          },
        },
        call: undefined,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('UPSTREAM_REJECTED');
    expect(answers).toBe(0);
  });
});
