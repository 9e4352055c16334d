import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { batchFromWire, CheckoutIntegrator } from '../../src/checkout/checkout.integrator';
import { AppError } from '../../src/common/app-error';
import { TransactionsService, type SignInput } from '../../src/transactions/transactions.service';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import { CHECKOUT_TEST_ENV, market, ownerOf } from '../support/checkout-helpers';
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
    const { listing, buyer } = market(t.sandbox, `sas-${++n}`);
    const check = await t.app
      .get(CheckoutIntegrator)
      .revalidate({ ...listing, expectedPriceMinor: listing.askPriceMinor, buyerAddress: buyer.address });
    if (check.kind !== 'ok') throw new Error(`revalidation: ${check.kind}`);
    return {
      listing,
      buyerAddress: buyer.address,
      input: {
        clientId: client.id,
        idempotencyKey: `sas:${randomUUID()}`,
        kind: 'user',
        subject: buyer.subject,
        batch: batchFromWire(check.batch),
      },
    };
  }

  it('signs, sends at once and records the first answer alongside the caller, once; the purchase lands', async () => {
    const { input, listing, buyerAddress } = await purchase();
    const before = t.sandbox.admin.stats().transactions;
    const alongside: { id: string; phase: string; status: string | null }[] = [];
    const onSigned: number[] = [];
    const result = await sut.signAndSend(input, {
      onSigned: () => onSigned.push(alongside.length),
      alongsideAnswer: (record, answer) => {
        alongside.push({ id: record.id, phase: record.phase, status: answer.status });
        return Promise.resolve();
      },
    });
    expect(result.replayed).toBe(false);
    expect(t.sandbox.admin.stats().transactions).toBe(before + 1);
    expect(onSigned).toEqual([0]);
    expect(alongside).toEqual([{ id: result.record.id, phase: 'signed', status: 'processing' }]);
    if ('error' in result.sent) throw result.sent.error;
    expect(result.sent.answered).toBe(true);
    expect(result.sent.record).toMatchObject({ phase: 'signed', status: 'processing', submitAttempts: 1 });
    expect(result.sent.record.submittedAt).not.toBeNull();
    const history = (await sut.history(result.record.id)).map((e) => e.type);
    expect(history).toEqual(['created', 'signed', 'submitted', 'status']);
    await waitUntil(
      () => Promise.resolve(ownerOf(t.sandbox, listing.eventId, listing.ticketId) === buyerAddress),
      5_000,
      20,
    );
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

  it('a refused signing (the buyer is not the subject wallet: 403) throws UPSTREAM_REJECTED, sends nothing', async () => {
    const { input: mine } = await purchase();
    const { input: theirs } = await purchase();
    const input: SignInput = { ...mine, subject: theirs.subject };
    let answers = 0;
    const error = await sut
      .signAndSend(input, {
        alongsideAnswer: () => {
          answers++;
          return Promise.resolve();
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('UPSTREAM_REJECTED');
    expect(answers).toBe(0);
  });
});
