import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatChaosReport, runChaos } from '../../bench/chaos/chaos.run';
import type { OrderView } from '../../bench/chaos/orders-client';
import type { LedgerTransaction } from '../../bench/chaos/sandbox-process';
import { audit, type OrderRecord } from '../../bench/chaos/chaos.audit';
import { startOwnCluster, type OwnCluster } from '../support/own-postgres';

/**
 * The CI-sized `npm run chaos` (docs/chaos.md): the same harness, smaller. A standalone sandbox with ~20%
 * upstream faults and null-id listing pages, two replicas on one database of a PostgreSQL cluster of this
 * file's own (it is restarted mid-run), two `kill -9` restarts, one replica frozen past its leases, both
 * replicas killed at once, contended listings; then the audit against the sandbox ledger. Seeded, so a
 * failure replays with the same CHAOS seed.
 */
describe('Checkout chaos, CI size (e2e: two replicas, faults, kill -9, PostgreSQL restart, freeze)', () => {
  let cluster: OwnCluster | undefined;
  let databaseUrl = '';
  beforeAll(async () => {
    cluster = await startOwnCluster();
    databaseUrl = await cluster.createDatabase('bff_test_chaos');
  }, 60_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('60 orders, every disruption once: no 500, false rejection, duplicate, lost, unconfirmed or late order', async () => {
    const own = cluster as OwnCluster;
    const report = await runChaos({
      orders: 60,
      concurrency: 10,
      kills: 2,
      seed: 'ci-chaos-1',
      databaseUrl,
      restartDatabase: async (downMs) => {
        await own.stopImmediately();
        await new Promise((r) => setTimeout(r, downMs));
        await own.start();
      },
      log: () => undefined,
    });
    // The printed figures, on failure: the report names the orders behind each breach.
    process.stdout.write(`${formatChaosReport(report)}\n`);
    expect(report.breaches).toEqual([]);
    expect(report).toMatchObject({
      orders: 60,
      accepted: 60,
      duplicatePurchases: 0,
      lostOrders: 0,
      completeWithoutConfirmed: 0,
      notFinalInTime: 0,
      falseRejections: 0,
      contendedMultipleWinners: 0,
      contendedWrongOutcomes: 0,
      http: expect.objectContaining({ status500: 0, other5xx: 0 }),
      disruptions: expect.objectContaining({ kills: 2, doubleKills: 1, pgRestarts: 1, freezes: 1 }),
    });
    // The run did exercise something: faults fired, null-id pages served, contended listings sold once,
    // idempotent repeats replayed, orders completed; 2 first starts + 2 single kills + both replicas once.
    expect(report.faultsInjected).toBeGreaterThan(0);
    expect(report.nullIdPages).toBeGreaterThan(0);
    expect(report.contendedListings).toBeGreaterThan(0);
    expect(report.contendedSold).toBe(report.contendedListings);
    expect(report.idempotentRepeats).toBeGreaterThan(0);
    expect(report.confirmed).toBeGreaterThan(0);
    expect(report.replicaStarts).toBe(6);
  }, 300_000);
});

interface OrderOpts {
  failure?: string;
  finalAtMs?: number;
}
const order = (
  id: string,
  state: string,
  tx: string | null,
  ticket: string,
  { failure, finalAtMs = 1_000 }: OrderOpts = {},
): OrderView => ({
  id,
  idempotency_key: `k-${id}`,
  state,
  final: state !== 'submitted',
  attempt: 1,
  event_id: '1',
  ticket_id: ticket,
  failure: failure ? { code: failure, reason: 'r' } : null,
  transaction: { custodial_transaction_id: tx, transaction_signature: null },
  created_at: new Date(0).toISOString(),
  final_at: state === 'submitted' ? null : new Date(finalAtMs).toISOString(),
});
const record = (
  id: string,
  ticket: string,
  { wrongPrice = false, contended = false, buyer = 'b' } = {},
): OrderRecord => ({
  planned: {
    index: 0,
    key: `k-${id}`,
    body: {
      buyer_subject: buyer,
      buyer_address: 'addr',
      event_id: '1',
      ticket_id: ticket,
      expected_price_minor: wrongPrice ? '2' : '1',
    },
    listingPriceMinor: '1',
    wrongPrice,
    contended,
    repeat: false,
  },
  accepted: order(id, 'submitted', null, ticket),
  refusal: null,
  acceptedAt: 0,
  finalAfterMs: null,
});
const tx = (
  id: string,
  ticket: string,
  state: string,
  { key = `up-${id}`, subject = 'b', landedAtMs = state === 'confirmed' ? 500 : null } = {},
): LedgerTransaction => ({
  custodialTransactionId: id,
  transactionSignature: `sig-${id}`,
  state,
  failureReason: null,
  instruction: 'accept_offer_v2',
  walletKind: 'user',
  subject,
  idempotencyKey: key,
  items: [{ event_id: '1', ticket_id: ticket }],
  landedAtMs,
});
const auditOf = (
  records: OrderRecord[],
  views: [string, OrderView | null][],
  ledger: LedgerTransaction[],
  notes: string[] = [],
) =>
  audit({
    seed: 's',
    records,
    views: new Map(views),
    ledger,
    lastFaultAt: 0,
    finalWithinMs: 60_000,
    note: (line) => notes.push(line),
  });

describe(audit.name, () => {
  it('counts each breach class from the ledger, and none on a clean run', () => {
    const notes: string[] = [];
    const sut = auditOf(
      [
        record('ok', '1'),
        record('dup', '2'),
        record('lost', '3'),
        record('unconfirmed', '4'),
        record('late', '5'),
        record('moved', '6'),
        record('wrong', '7', { wrongPrice: true }),
      ],
      [
        ['ok', order('ok', 'confirmed', 't1', '1')],
        ['dup', order('dup', 'confirmed', 't2', '2')],
        ['lost', null],
        ['unconfirmed', order('unconfirmed', 'confirmed', 't4', '4')],
        ['late', order('late', 'submitted', null, '5')],
        ['moved', order('moved', 'failed', null, '6', { failure: 'UPSTREAM_UNAVAILABLE' })],
        ['wrong', order('wrong', 'rejected', null, '7', { failure: 'PRICE_CHANGED' })],
      ],
      [
        tx('t1', '1', 'confirmed'),
        tx('t2', '2', 'confirmed'),
        tx('t2b', '2', 'confirmed'),
        tx('t4', '4', 'processing'),
        tx('t6', '6', 'confirmed'),
        tx('t7', '7', 'signed'),
      ],
      notes,
    );
    expect(sut).toMatchObject({
      accepted: 7,
      duplicatePurchases: 1,
      lostOrders: 1,
      completeWithoutConfirmed: 1,
      notFinalInTime: 1,
      ledgerWithoutOrder: 2,
      falseRejections: 0,
    });
    expect(notes.length).toBeGreaterThanOrEqual(6);

    const clean = auditOf(
      [record('ok', '1')],
      [['ok', order('ok', 'confirmed', 't1', '1')]],
      [tx('t1', '1', 'confirmed'), tx('t0', '1', 'expired')],
    );
    expect(clean).toMatchObject({
      duplicatePurchases: 0,
      lostOrders: 0,
      completeWithoutConfirmed: 0,
      notFinalInTime: 0,
      ledgerWithoutOrder: 0,
      falseRejections: 0,
    });
  });

  it("counts a rejection as false when the listing was live at the order's price until the order was final", () => {
    const notes: string[] = [];
    const sut = auditOf(
      [
        // Never sold, yet LISTING_GONE; at its own price, yet PRICE_CHANGED: both false.
        record('never-sold', '8'),
        record('same-price', '11'),
        // Sent at a wrong price: PRICE_CHANGED is the truth.
        record('wrong', '12', { wrongPrice: true }),
        // Listing 9 sold by w at 500 ms (landedAtMs): gone for l1 (final at 1000), still live for l2 (final at 400).
        record('w', '9', { contended: true, buyer: 'w' }),
        record('l1', '9', { contended: true, buyer: 'l1' }),
        record('l2', '9', { contended: true, buyer: 'l2' }),
      ],
      [
        ['never-sold', order('never-sold', 'rejected', null, '8', { failure: 'LISTING_GONE' })],
        ['same-price', order('same-price', 'rejected', null, '11', { failure: 'PRICE_CHANGED' })],
        ['wrong', order('wrong', 'rejected', null, '12', { failure: 'PRICE_CHANGED' })],
        ['w', order('w', 'confirmed', 'tw', '9')],
        ['l1', order('l1', 'rejected', null, '9', { failure: 'LISTING_GONE', finalAtMs: 1_000 })],
        ['l2', order('l2', 'rejected', null, '9', { failure: 'LISTING_GONE', finalAtMs: 400 })],
      ],
      [tx('tw', '9', 'confirmed', { subject: 'w', landedAtMs: 500 })],
      notes,
    );
    expect(sut).toMatchObject({
      falseRejections: 3,
      // The losers of listing 9 are not "ledger purchases the order misses": the buyer who paid is w.
      ledgerWithoutOrder: 0,
      duplicatePurchases: 0,
      contendedListings: 1,
      contendedSold: 1,
      contendedMultipleWinners: 0,
      contendedWrongOutcomes: 0,
    });
    expect(notes.join('\n')).toMatch(/never-sold.*LISTING_GONE/);
    expect(notes.join('\n')).toMatch(/l2.*LISTING_GONE/);
  });

  it('counts contended listings with two winners and losers that end with a code that is not the truth', () => {
    const sut = auditOf(
      [
        record('a', '10', { contended: true, buyer: 'a' }),
        record('b', '10', { contended: true, buyer: 'b' }),
        record('c', '10', { contended: true, buyer: 'c' }),
        record('x', '13', { contended: true, buyer: 'x' }),
        record('y', '13', { contended: true, buyer: 'y' }),
      ],
      [
        ['a', order('a', 'confirmed', 'ta', '10')],
        ['b', order('b', 'confirmed', 'tb', '10')],
        ['c', order('c', 'landed_with_error', null, '10', { failure: 'LANDED_WITH_ERROR' })],
        ['x', order('x', 'landed_with_error', null, '13', { failure: 'LANDED_WITH_ERROR' })],
        ['y', order('y', 'rejected', null, '13', { failure: 'LISTING_RESTRICTED' })],
      ],
      [
        tx('ta', '10', 'confirmed', { subject: 'a' }),
        tx('tb', '10', 'confirmed', { subject: 'b' }),
        tx('tx', '13', 'landed_with_error', { subject: 'x' }),
      ],
    );
    expect(sut).toMatchObject({
      duplicatePurchases: 1,
      contendedListings: 2,
      contendedSold: 1,
      contendedMultipleWinners: 1,
      contendedWrongOutcomes: 1,
    });
  });
});
