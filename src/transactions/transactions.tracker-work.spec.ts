import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { TransactionsConfig } from '../config/transactions.config';
import type { DurableWorkService } from '../durable-work/durable-work.service';
import type { LedgerTransactionEntity } from './ledger-transaction.entity';
import type { LedgerTransactionRepository } from './ledger-transaction.repository';
import type { TransactionsMetrics } from './transactions.metrics';
import type { TransactionsSigner } from './transactions.signer';
import type { TransactionsSubmitter } from './transactions.submitter';
import { TransactionsTrackerWork } from './transactions.tracker-work';

type Call = { method: string; args: unknown[] };

/** Repository and metrics doubles that record what the tracker's attempt wrote. */
function setup() {
  const calls: Call[] = [];
  const results: string[] = [];
  const warnings: string[] = [];
  const repo = {
    recordOnFinal: (...args: unknown[]) =>
      Promise.resolve(void calls.push({ method: 'recordOnFinal', args })),
    release: () => Promise.resolve(true),
    claimDue: (...args: unknown[]) => {
      calls.push({ method: 'claimDue', args });
      return Promise.resolve([]);
    },
  } as unknown as LedgerTransactionRepository;
  const metrics = {
    attempts: {
      inc: (labels: { work: string; result: string }) => results.push(`${labels.work}:${labels.result}`),
    },
  } as unknown as TransactionsMetrics;
  const durable = { instanceId: 'me', fencedOff: () => undefined } as unknown as DurableWorkService;
  vi.spyOn(Logger.prototype, 'warn').mockImplementation((_obj: unknown, msg?: unknown) =>
    warnings.push(msg as string),
  );
  const config = Object.assign(new TransactionsConfig(), {
    TX_RESUBMIT_BASE_DELAY_MS: 100,
    TX_RESUBMIT_MAX_DELAY_MS: 1000,
  });
  const sut = new TransactionsTrackerWork(
    repo,
    {} as TransactionsSigner,
    {} as TransactionsSubmitter,
    config,
    metrics,
    durable,
  );
  return { sut, calls, results, warnings };
}

/** A final row claimed for its after-final handler. */
const finalRow = (onFinal: string, onFinalAttempts = 0): LedgerTransactionEntity =>
  ({
    id: 'tx-1',
    phase: 'signed',
    status: 'confirmed',
    finalAt: new Date(),
    onFinal,
    onFinalDoneAt: null,
    onFinalAttempts,
    leaseToken: '9',
  }) as LedgerTransactionEntity;

const failing = (): Promise<void> => Promise.reject(new Error('mirror refresh failed'));

describe(TransactionsTrackerWork.name, () => {
  it('records a handler run that succeeded as done', async () => {
    const { sut, calls, results } = setup();
    sut.registerFinalHandler('h', () => Promise.resolve());
    await sut.work(finalRow('h'));
    expect(calls).toEqual([{ method: 'recordOnFinal', args: ['tx-1', 'me', null, null] }]);
    expect(results).toEqual(['on_final:done']);
  });

  it('a failed run is due again after the backoff, which grows with the runs so far', async () => {
    const { sut, calls, results } = setup();
    sut.registerFinalHandler('h', failing, { maxAttempts: 8 });
    await sut.work(finalRow('h', 0));
    await sut.work(finalRow('h', 3));
    const delays = calls.map((c) => c.args[3] as number);
    expect(calls.map((c) => c.args.slice(0, 3))).toEqual([
      ['tx-1', 'me', 'mirror refresh failed'],
      ['tx-1', 'me', 'mirror refresh failed'],
    ]);
    // Full jitter under a ceiling of base · 2^(tries − 1): 100 after the first run, 800 after the fourth.
    expect(delays[0]).toBeGreaterThanOrEqual(0);
    expect(delays[0]).toBeLessThanOrEqual(100);
    expect(delays[1]).toBeLessThanOrEqual(800);
    expect(results).toEqual(['on_final:failed', 'on_final:failed']);
  });

  it('gives up after maxAttempts runs: nothing scheduled, a warning', async () => {
    const { sut, calls, results, warnings } = setup();
    sut.registerFinalHandler('h', failing, { maxAttempts: 3 });
    await sut.work(finalRow('h', 2));
    expect(calls).toEqual([{ method: 'recordOnFinal', args: ['tx-1', 'me', 'mirror refresh failed', null] }]);
    expect(results).toEqual(['on_final:gave_up']);
    expect(warnings).toContain('after-final handler given up');
  });

  it('without maxAttempts a failing handler is never given up', async () => {
    const { sut, calls, results } = setup();
    sut.registerFinalHandler('h', failing);
    await sut.work(finalRow('h', 1_000));
    expect(calls[0]?.args[3]).toEqual(expect.any(Number));
    expect(results).toEqual(['on_final:failed']);
  });

  it('a handler this replica did not register is neither run nor recorded: the row stays for one that did', async () => {
    const { sut, calls, results } = setup();
    sut.registerFinalHandler('other', () => Promise.resolve());
    await sut.work(finalRow('missing'));
    expect(calls).toEqual([]);
    expect(results).toEqual(['on_final:not_registered']);
  });

  it('claims due rows naming only the handlers registered here', async () => {
    const { sut, calls } = setup();
    sut.registerFinalHandler('a', () => Promise.resolve());
    sut.registerFinalHandler('b', () => Promise.resolve());
    await sut.claimDue(5);
    expect(calls.map((c) => c.args[3])).toEqual([['a', 'b']]);
  });

  it('maps instructions to the handler registered for them, one handler per instruction and per name', () => {
    const { sut } = setup();
    sut.registerFinalHandler('refresh', () => Promise.resolve(), {
      instructions: ['list_ticket_v2', 'cancel_listing_v1'],
    });
    expect(sut.finalHandlerFor('list_ticket_v2')).toBe('refresh');
    expect(sut.finalHandlerFor('cancel_listing_v1')).toBe('refresh');
    expect(sut.finalHandlerFor('accept_offer_v2')).toBeUndefined();
    expect(() => sut.registerFinalHandler('refresh', () => Promise.resolve())).toThrow(/already registered/);
    expect(() =>
      sut.registerFinalHandler('another', () => Promise.resolve(), { instructions: ['cancel_listing_v1'] }),
    ).toThrow(/already refresh/);
    expect(sut.finalHandlerFor('cancel_listing_v1')).toBe('refresh');
    expect(() => sut.registerFinalHandler('zero', () => Promise.resolve(), { maxAttempts: 0 })).toThrow(
      /maxAttempts/,
    );
  });
});
