import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { OrderView } from '../../bench/chaos/orders-client';
import { waitForExit, waitFor, ProcessGroup } from '../../bench/chaos/processes';
import { SandboxProcess, type LedgerTransaction } from '../../bench/chaos/sandbox-process';
import { replicaEnv } from '../../bench/chaos/service-env';
import { ServiceReplica } from '../../bench/chaos/service-replica';
import { generateApiKey } from '../../src/auth/api-key';
import { CRASH_POINTS, type CrashPointName } from '../../src/checkout/crash-points';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

/**
 * Crash points reached only when an attempt's transaction expires: the submission is held back by faults, the
 * sandbox clock jumps past the blockhash lifetime, then the faults go. The order must then look up the
 * purchase status and start attempt 2.
 */
const EXPIRY_POINTS: readonly CrashPointName[] = [
  'before_commit_expired',
  'after_commit_expired',
  'before_purchase_status',
  'after_purchase_status',
  'before_commit_new_attempt',
  'after_commit_new_attempt',
];

interface Case {
  point: CrashPointName;
  /** Sent at a price the listing does not have: the order must end `rejected` with nothing signed. */
  wrongPrice?: boolean;
}

const CASES: Case[] = [
  ...CRASH_POINTS.map((point) => ({ point })),
  { point: 'after_revalidate', wrongPrice: true },
  { point: 'before_commit_final', wrongPrice: true },
];

/**
 * For each crash point: a replica armed with CHECKOUT_CRASH_POINTS=<point> takes an order and SIGKILLs itself
 * there (the test-only hook, src/checkout/crash-points.ts); the replica is restarted without it, the client
 * retries its POST with the same key, and the order must reach a final state that the sandbox ledger agrees
 * with: exactly one confirmed purchase of the listing when confirmed, nothing signed when rejected. One
 * sandbox process and one database for all cases.
 */
describe('Checkout crash points (e2e: kill -9 at each point, restart, ledger agrees)', () => {
  const group = new ProcessGroup();
  const apiKey = generateApiKey();
  let sandbox: SandboxProcess;
  let replica: ServiceReplica;
  let databaseUrl = '';
  let caseNo = 0;
  const EVENT_ID = 8_100_000n;

  beforeAll(async () => {
    sandbox = await SandboxProcess.start(group, { seed: 'crash-points', landingDelayMs: 300 });
    await sandbox.createEvent(EVENT_ID);
    databaseUrl = await createDatabaseFromTemplate(inject('databaseAdminUrl'));
    replica = await ServiceReplica.create(
      'crash-replica',
      group,
      replicaEnv({
        databaseUrl,
        sandboxUrl: sandbox.url,
        apiKey,
        extra: { SYNC_ENABLED: 'false', SYNC_ON_STARTUP: 'false' },
      }),
    );
  });
  afterAll(async () => {
    await group.stopAll();
    if (databaseUrl) await dropDatabase(inject('databaseAdminUrl'), databaseUrl);
  });

  /** POST /v1/orders, the body read at once; null when the replica died while answering. */
  const post = async (key: string, body: unknown): Promise<{ status: number; order: OrderView } | null> => {
    try {
      const res = await fetch(`${replica.url}/v1/orders`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'idempotency-key': key,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      return { status: res.status, order: (await res.json()) as OrderView };
    } catch {
      return null;
    }
  };
  const waitFinal = async (id: string): Promise<OrderView> => {
    let last: OrderView | undefined;
    await waitFor(
      `order ${id} final`,
      async () => {
        const res = await fetch(`${replica.url}/v1/orders/${id}?wait=5s`, {
          headers: { authorization: `Bearer ${apiKey}` },
          signal: AbortSignal.timeout(15_000),
        });
        expect(res.status).toBe(200);
        last = (await res.json()) as OrderView;
        return last.final;
      },
      45_000,
      0,
    );
    return last as OrderView;
  };
  const purchasesOf = async (eventId: string, ticketId: string): Promise<LedgerTransaction[]> =>
    (await sandbox.transactions('accept_offer_v2')).filter((t) =>
      t.items.some((i) => i.event_id === eventId && i.ticket_id === ticketId),
    );

  it('has a case for every crash point the checkout declares', () => {
    expect(new Set(CASES.map((c) => c.point))).toEqual(new Set(CRASH_POINTS));
  });

  for (const { point, wrongPrice } of CASES) {
    it(`${point}${wrongPrice ? ' (price changed)' : ''}: killed there, restarted, final as the ledger says`, async () => {
      caseNo++;
      const buyer = `crash-buyer-${caseNo}`;
      const price = 2_000_000n + BigInt(caseNo);
      const listing = await sandbox.seedListing(EVENT_ID, BigInt(caseNo), 'crash-seller', price);
      const body = {
        buyer_subject: buyer,
        buyer_address: await sandbox.userAddress(buyer),
        event_id: listing.event_id,
        ticket_id: listing.ticket_id,
        expected_price_minor: (wrongPrice ? price + 1n : price).toString(),
      };
      const key = `crash-${point}-${caseNo}`;
      const expiry = EXPIRY_POINTS.includes(point);

      try {
        await replica.start({ CHECKOUT_CRASH_POINTS: point });
        const armed = replica.proc;
        if (!armed) throw new Error('replica not started');
        if (expiry)
          await sandbox.admin('PUT', '/faults', {
            rules: [{ operation: 'submit', kind: 'error', status: 503 }],
          });
        const first = await post(key, body);
        if (expiry) {
          // Signed, the submission refused: age the blockhash out, then let submissions through.
          await waitFor(
            'signed',
            async () => (await purchasesOf(listing.event_id, listing.ticket_id)).length > 0,
            30_000,
          );
          await sandbox.admin('POST', '/clock/advance', { ms: 61_000 });
          await sandbox.clearFaults();
        }
        await waitForExit(armed, 45_000);
        expect(armed.child.signalCode).toBe('SIGKILL');

        await replica.start();
        // The client retries with the same key whatever it saw: the same order, or the first one if none was made.
        const firstId = first?.status === 202 ? first.order.id : null;
        const retried = await post(key, body);
        const order = retried?.order as OrderView;
        const final = await waitFinal(order.id);
        const purchases = await purchasesOf(listing.event_id, listing.ticket_id);
        const confirmed = purchases.filter((t) => t.state === 'confirmed');
        const observed = {
          retryStatus: retried?.status,
          sameOrder: firstId ?? order.id,
          state: final.state,
          failureCode: final.failure?.code ?? null,
          attempt: final.attempt,
          signed: purchases.length,
          expired: purchases.filter((t) => t.state === 'expired').length,
          confirmed: confirmed.map((t) => ({ id: t.custodialTransactionId, subject: t.subject })),
          owner: (await sandbox.ticket(listing.event_id, listing.ticket_id)).owner,
        };
        const common = { retryStatus: 202, sameOrder: order.id };
        expect(observed).toEqual(
          wrongPrice
            ? {
                ...common,
                state: 'rejected',
                failureCode: 'PRICE_CHANGED',
                attempt: 1,
                signed: 0,
                expired: 0,
                confirmed: [],
                owner: await sandbox.userAddress('crash-seller'),
              }
            : {
                ...common,
                state: 'confirmed',
                failureCode: null,
                attempt: expiry ? 2 : 1,
                signed: expiry ? 2 : 1,
                expired: expiry ? 1 : 0,
                confirmed: [{ id: final.transaction?.custodial_transaction_id, subject: buyer }],
                owner: body.buyer_address,
              },
        );
      } finally {
        await replica.stop();
        await sandbox.clearFaults();
      }
    }, 150_000);
  }
});
