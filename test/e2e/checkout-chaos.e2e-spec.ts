import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { audit, formatChaosReport, runChaos } from '../../bench/chaos/chaos.run';
import type { OrderView } from '../../bench/chaos/orders-client';
import type { LedgerTransaction } from '../../bench/chaos/sandbox-process';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

/**
 * The CI-sized `npm run chaos` (docs/chaos.md): the same harness, smaller. A standalone sandbox with ~20%
 * upstream faults, two replicas on one database, two `kill -9` restarts while orders run, then the audit
 * against the sandbox ledger. Seeded, so a failure replays with the same CHAOS seed.
 */
describe('Checkout chaos, CI size (e2e: two replicas, faults, kill -9)', () => {
  let databaseUrl = '';
  beforeAll(async () => {
    databaseUrl = await createDatabaseFromTemplate(inject('databaseAdminUrl'));
  });
  afterAll(async () => {
    if (databaseUrl) await dropDatabase(inject('databaseAdminUrl'), databaseUrl);
  });

  it('60 orders, concurrency 10, 2 kill -9 restarts: no duplicate, lost, unconfirmed or late order', async () => {
    const report = await runChaos({
      orders: 60,
      concurrency: 10,
      kills: 2,
      seed: 'ci-chaos-1',
      databaseUrl,
      log: () => undefined,
    });
    // The printed figures, on failure: the report names the orders behind each breach.
    process.stdout.write(`${formatChaosReport(report)}\n`);
    expect(report.breaches).toEqual([]);
    expect(report).toMatchObject({
      orders: 60,
      accepted: 60,
      kills: 2,
      duplicatePurchases: 0,
      lostOrders: 0,
      completeWithoutConfirmed: 0,
      notFinalInTime: 0,
    });
    // The run did exercise something: faults fired, idempotent repeats replayed, orders completed.
    expect(report.faultsInjected).toBeGreaterThan(0);
    expect(report.idempotentRepeats).toBeGreaterThan(0);
    expect(report.confirmed).toBeGreaterThan(0);
    expect(report.replicaStarts).toBe(4);
  }, 240_000);
});

const order = (id: string, state: string, tx: string | null, ticket: string): OrderView => ({
  id,
  idempotency_key: `k-${id}`,
  state,
  final: state !== 'submitted',
  attempt: 1,
  event_id: '1',
  ticket_id: ticket,
  failure: null,
  transaction: { custodial_transaction_id: tx, transaction_signature: null },
  created_at: new Date(0).toISOString(),
  final_at: state === 'submitted' ? null : new Date(1_000).toISOString(),
});
const record = (id: string, ticket: string, wrongPrice = false) => ({
  planned: {
    index: 0,
    key: `k-${id}`,
    body: {
      buyer_subject: 'b',
      buyer_address: 'addr',
      event_id: '1',
      ticket_id: ticket,
      expected_price_minor: '1',
    },
    wrongPrice,
    repeat: false,
  },
  accepted: order(id, 'submitted', null, ticket),
  refusal: null,
  acceptedAt: 0,
  finalAfterMs: null,
});
const tx = (id: string, ticket: string, state: string, key = `up-${id}`): LedgerTransaction => ({
  custodialTransactionId: id,
  transactionSignature: `sig-${id}`,
  state,
  failureReason: null,
  instruction: 'accept_offer_v2',
  walletKind: 'user',
  subject: 'b',
  idempotencyKey: key,
  items: [{ event_id: '1', ticket_id: ticket }],
});

describe(audit.name, () => {
  it('counts each breach class from the ledger, and none on a clean run', () => {
    const notes: string[] = [];
    const sut = audit({
      seed: 's',
      records: [
        record('ok', '1'),
        record('dup', '2'),
        record('lost', '3'),
        record('unconfirmed', '4'),
        record('late', '5'),
        record('moved', '6'),
        record('wrong', '7', true),
      ],
      views: new Map<string, OrderView | null>([
        ['ok', order('ok', 'confirmed', 't1', '1')],
        ['dup', order('dup', 'confirmed', 't2', '2')],
        ['lost', null],
        ['unconfirmed', order('unconfirmed', 'confirmed', 't4', '4')],
        ['late', order('late', 'submitted', null, '5')],
        ['moved', order('moved', 'failed', null, '6')],
        ['wrong', order('wrong', 'rejected', null, '7')],
      ]),
      ledger: [
        tx('t1', '1', 'confirmed'),
        tx('t2', '2', 'confirmed'),
        tx('t2b', '2', 'confirmed'),
        tx('t4', '4', 'processing'),
        tx('t6', '6', 'confirmed'),
        tx('t7', '7', 'signed'),
      ],
      lastFaultAt: 0,
      finalWithinMs: 60_000,
      note: (line) => notes.push(line),
    });
    expect(sut).toMatchObject({
      accepted: 7,
      duplicatePurchases: 1,
      lostOrders: 1,
      completeWithoutConfirmed: 1,
      notFinalInTime: 1,
      ledgerWithoutOrder: 2,
    });
    expect(notes.length).toBeGreaterThanOrEqual(6);

    const clean = audit({
      seed: 's',
      records: [record('ok', '1')],
      views: new Map([['ok', order('ok', 'confirmed', 't1', '1')]]),
      ledger: [tx('t1', '1', 'confirmed'), tx('t0', '1', 'expired')],
      lastFaultAt: 0,
      finalWithinMs: 60_000,
      note: () => undefined,
    });
    expect(clean).toMatchObject({
      duplicatePurchases: 0,
      lostOrders: 0,
      completeWithoutConfirmed: 0,
      notFinalInTime: 0,
      ledgerWithoutOrder: 0,
    });
  });
});
