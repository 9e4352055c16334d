import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultRule } from '../../src/sandbox/faults/model';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  getOrder,
  market,
  orderBody,
  ownerOf,
  postOrder,
  waitFinal,
  untilOwnedBy,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

/** The fault PRNG seed (rates below 1): set CHECKOUT_FAULT_SEED to replay a failing run. */
const SEED = process.env.CHECKOUT_FAULT_SEED ?? 'checkout-faults-1';

type Kind = Pick<FaultRule, 'kind' | 'status' | 'retryAfterSeconds'>;
const FAULTS: [string, Kind][] = [
  ['5xx', { kind: 'error', status: 503 }],
  ['429 + Retry-After', { kind: 'rate_limit', retryAfterSeconds: 1 }],
  ['hang', { kind: 'hang' }],
  ['reset', { kind: 'reset' }],
  ['response lost', { kind: 'response_lost' }],
  ['malformed json', { kind: 'malformed_json' }],
];
const STEPS = [
  ['revalidation (listings)', 'listings'],
  ['signing', 'signUser'],
  ['submission', 'submit'],
] as const;

describe('Checkout under upstream faults: no duplicate purchase, no premature completion (e2e)', () => {
  let t: TestApp;
  let client: TestClient;
  let n = 0;

  beforeAll(async () => {
    t = await startTestApp(CHECKOUT_TEST_ENV, { sandbox: { landingDelayMs: 50, faultSeed: SEED } });
    client = await issueTestKey(t.app, ['orders:write']);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Buys one listing with `rules` active and checks the ledger: one purchase, paid once, owned by the buyer. */
  async function buyUnder(rules: FaultRule[], expectedSignings = 1): Promise<string> {
    const { listing, buyer } = market(t.sandbox, `f${++n}`);
    const paidBefore = t.sandbox.admin.balance({ address: buyer.address });
    const signedBefore = t.sandbox.admin.stats().transactions;
    t.sandbox.admin.setFaults(rules, `${SEED}-${n}`);
    try {
      const res = await postOrder(t.app, client.key, `fault-${n}`, orderBody(listing, buyer));
      expect(res.status).toBe(202);
      const done = await waitFinal(t.app, client.key, res.body.id, 25_000);
      expect(done.state).toBe('confirmed');
      expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
      expect(t.sandbox.admin.balance({ address: buyer.address })).toBe(paidBefore - listing.askPriceMinor);
      expect(t.sandbox.admin.stats().transactions - signedBefore).toBe(expectedSignings);
      return done.state;
    } finally {
      t.sandbox.admin.clearFaults();
    }
  }

  for (const [stepName, operation] of STEPS)
    for (const [faultName, fault] of FAULTS)
      it(`${faultName} on ${stepName}`, async () => {
        expect(await buyUnder([{ operation, times: 2, ...fault }])).toBe('confirmed');
      });

  it('a submission answered with status null never completes the order, even once the ledger confirmed it', async () => {
    const { listing, buyer } = market(t.sandbox, 'null-status');
    t.sandbox.admin.setFaults([{ operation: 'submit', kind: 'status_null' }]);
    try {
      const res = await postOrder(t.app, client.key, 'null-status', orderBody(listing, buyer));
      await untilOwnedBy(t.sandbox, listing, buyer.address, 10_000);
      // Several re-submissions later, every answer still says null: the order is not complete.
      await new Promise((r) => setTimeout(r, 600));
      const open = (await getOrder(t.app, client.key, `/v1/orders/${res.body.id}`)).body;
      expect(open).toMatchObject({ state: 'submitted', final: false });
    } finally {
      t.sandbox.admin.clearFaults();
    }
  });

  it('an attempt that expired is looked up by key (through purchase-status faults) before attempt 2', async () => {
    const { listing, buyer } = market(t.sandbox, 'expiry');
    const paidBefore = t.sandbox.admin.balance({ address: buyer.address });
    // Submissions fail until the blockhash has aged out; the purchase-status lookup fails twice too.
    t.sandbox.admin.setFaults([
      { operation: 'submit', kind: 'error', status: 503 },
      { operation: 'purchaseStatus', kind: 'error', status: 502, times: 1 },
      { operation: 'purchaseStatus', kind: 'malformed_json', times: 1 },
    ]);
    const res = await postOrder(t.app, client.key, 'expiry', orderBody(listing, buyer));
    // Signed (its bytes sent once, unanswered): the order shows `signed` or, once that send is recorded,
    // `submitted`; either way the transaction exists and its blockhash can age out.
    await waitUntil(
      async () =>
        ['signed', 'submitted'].includes(
          (await getOrder(t.app, client.key, `/v1/orders/${res.body.id}`)).body.state,
        ),
      10_000,
      20,
    );
    t.sandbox.admin.advanceTime(61_000);
    t.sandbox.admin.setFaults(t.sandbox.admin.faults().filter((r) => r.operation !== 'submit'));
    const done = await waitFinal(t.app, client.key, res.body.id, 25_000);
    expect(done).toMatchObject({ state: 'confirmed', attempt: 2 });
    expect(done.previous_attempts).toHaveLength(1);
    // A new attempt is a new transaction under a new derived key.
    expect(done.previous_attempts[0]?.custodial_transaction_id).toMatch(/^[0-9a-f]{64}$/);
    expect(done.previous_attempts[0]?.custodial_transaction_id).not.toBe(
      done.transaction?.custodial_transaction_id,
    );
    expect(done.steps?.map((s) => s.step)).toEqual(
      expect.arrayContaining(['expired', 'new_attempt', 'confirmed']),
    );
    expect(t.sandbox.admin.balance({ address: buyer.address })).toBe(paidBefore - listing.askPriceMinor);
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
  });

  it('seeded random faults (20% of every operation, all kinds): each order final, each ticket bought once', async () => {
    const kinds: FaultRule[] = FAULTS.map(([, f]) => ({ operation: '*', rate: 0.2 / FAULTS.length, ...f }));
    const buys = Array.from({ length: 12 }, (_, i) => market(t.sandbox, `rand-${i}`));
    const before = buys.map((b) => t.sandbox.admin.balance({ address: b.buyer.address }));
    t.sandbox.admin.setFaults(kinds, SEED);
    try {
      const orders = await Promise.all(
        buys.map((b, i) => postOrder(t.app, client.key, `rand-${i}`, orderBody(b.listing, b.buyer))),
      );
      const done = await Promise.all(orders.map((o) => waitFinal(t.app, client.key, o.body.id, 60_000)));
      // Confirmed ⇔ the ledger moved the ticket and the money exactly once; otherwise nothing moved.
      const outcome = done.map((order, i) => ({
        confirmed: order.state === 'confirmed',
        paid: (before[i] ?? 0n) - t.sandbox.admin.balance({ address: buys[i].buyer.address }),
        owned:
          ownerOf(t.sandbox, buys[i].listing.eventId, buys[i].listing.ticketId) === buys[i].buyer.address,
      }));
      expect(outcome).toEqual(
        outcome.map((o, i) => ({
          confirmed: o.confirmed,
          paid: o.confirmed ? buys[i].listing.askPriceMinor : 0n,
          owned: o.confirmed,
        })),
      );
      expect(done.every((o) => o.final)).toBe(true);
    } finally {
      t.sandbox.admin.clearFaults();
    }
  }, 90_000);
});
