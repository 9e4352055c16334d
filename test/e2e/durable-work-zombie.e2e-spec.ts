import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { OrderView } from '../../bench/chaos/orders-client';
import { ProcessGroup, waitFor, type Managed } from '../../bench/chaos/processes';
import { SandboxProcess } from '../../bench/chaos/sandbox-process';
import { replicaEnv } from '../../bench/chaos/service-env';
import { ServiceReplica } from '../../bench/chaos/service-replica';
import { generateApiKey } from '../../src/auth/api-key';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

/** Whether the process is stopped (SIGSTOP): state `T` in /proc/<pid>/stat. */
async function isStopped(proc: Managed): Promise<boolean> {
  const stat = await readFile(`/proc/${proc.pid}/stat`, 'utf8').catch(() => '');
  return / T /.test(stat.slice(stat.lastIndexOf(')') + 1, stat.lastIndexOf(')') + 4));
}

/**
 * Zombie drives (durable work's fencing, docs/durable-work.md): two real replicas on one database. Replica A takes
 * an order and freezes itself (SIGSTOP, the test-only `:stop` crash point) right after its revalidation read,
 * past its lease; replica B's worker claims the order (a new fencing token) and finishes it; A is resumed
 * (SIGCONT) and must do nothing that is not idempotent with B's work: its late work is refused by its token and
 * shows as fenced off in its metrics and logs, and the sandbox ledger agrees with the order's final state.
 */
describe('Durable work zombies (e2e: a drive frozen past its lease, another replica takes over)', () => {
  const group = new ProcessGroup();
  const apiKey = generateApiKey();
  const EVENT_ID = 8_300_000n;
  let sandbox: SandboxProcess;
  let a: ServiceReplica;
  let b: ServiceReplica;
  let databaseUrl = '';
  let caseNo = 0;

  beforeAll(async () => {
    sandbox = await SandboxProcess.start(group, { seed: 'zombie', landingDelayMs: 200 });
    await sandbox.createEvent(EVENT_ID);
    databaseUrl = await createDatabaseFromTemplate(inject('databaseAdminUrl'));
    const env = () =>
      replicaEnv({
        databaseUrl,
        sandboxUrl: sandbox.url,
        apiKey,
        extra: { SYNC_ENABLED: 'false', SYNC_ON_STARTUP: 'false' },
      });
    a = await ServiceReplica.create('zombie-a', group, env());
    b = await ServiceReplica.create('zombie-b', group, env());
    await b.start();
  }, 120_000);
  afterAll(async () => {
    for (const r of [a, b]) if (r?.proc && !r.proc.exited()) process.kill(r.proc.pid, 'SIGCONT');
    await group.stopAll();
    if (databaseUrl) await dropDatabase(inject('databaseAdminUrl'), databaseUrl);
  });

  const auth = { authorization: `Bearer ${apiKey}` };
  const post = async (url: string, key: string, body: unknown): Promise<OrderView | null> => {
    try {
      const res = await fetch(`${url}/v1/orders`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(2_000),
      });
      return (await res.json()) as OrderView;
    } catch {
      return null; // A froze before answering: the client's retry goes to B with the same key.
    }
  };
  const waitFinal = async (id: string): Promise<OrderView> => {
    let last: OrderView | undefined;
    await waitFor(
      `order ${id} final`,
      async () => {
        const res = await fetch(`${b.url}/v1/orders/${id}?wait=5s&steps=true`, {
          headers: auth,
          signal: AbortSignal.timeout(15_000),
        });
        last = (await res.json()) as OrderView;
        return last.final;
      },
      45_000,
      0,
    );
    return last as OrderView;
  };
  const fencedOnA = async (): Promise<number> => {
    const text = await (await fetch(`${a.url}/metrics`, { headers: auth })).text();
    const line = /^durable_work_fenced_total\{queue="orders"\} (\d+)/m.exec(text);
    return line ? Number(line[1]) : 0;
  };
  const purchasesOf = async (ticketId: bigint) =>
    (await sandbox.transactions('accept_offer_v2')).filter((t) =>
      t.items.some((i) => i.event_id === EVENT_ID.toString() && i.ticket_id === ticketId.toString()),
    );

  /** POSTs to A, which freezes after its revalidation; resumes it once `whileFrozen` is done. */
  async function frozenDrive(
    ticketId: bigint,
    price: bigint,
    whileFrozen: (orderId: string) => Promise<void>,
  ): Promise<{ order: OrderView; buyerAddress: string }> {
    caseNo++;
    const buyer = `zombie-buyer-${caseNo}`;
    const body = {
      buyer_subject: buyer,
      buyer_address: await sandbox.userAddress(buyer),
      event_id: EVENT_ID.toString(),
      ticket_id: ticketId.toString(),
      expected_price_minor: price.toString(),
    };
    const key = `zombie-${caseNo}`;
    await a.start({ CHECKOUT_CRASH_POINTS: 'after_revalidate:stop', CHECKOUT_WORKER_ENABLED: 'false' });
    const frozen = a.proc as Managed;
    await post(a.url, key, body);
    await waitFor('replica A frozen after its revalidation', () => isStopped(frozen), 15_000, 20);
    // The client retries with the same key at B: the same order.
    const order = (await post(b.url, key, body)) as OrderView;
    expect(order?.id).toMatch(/^[0-9a-f-]{36}$/);
    await whileFrozen(order.id);
    process.kill(frozen.pid, 'SIGCONT');
    await waitFor('A fenced off', async () => (await fencedOnA()) >= 1, 15_000, 100);
    return { order, buyerAddress: body.buyer_address };
  }

  it('B takes over and confirms; A, resumed, is fenced off: one purchase, the ledger agrees', async () => {
    const price = 3_000_001n;
    await sandbox.seedListing(EVENT_ID, 1n, 'zombie-seller', price);
    let confirmed: OrderView | undefined;
    const { order, buyerAddress } = await frozenDrive(1n, price, async (id) => {
      confirmed = await waitFinal(id);
    });
    // Give A's resumed drive time to do whatever it would, then read the ledger.
    await new Promise((r) => setTimeout(r, 1_500));
    const final = await waitFinal(order.id);
    const purchases = await purchasesOf(1n);
    expect({
      before: confirmed?.state,
      state: final.state,
      signed: purchases.length,
      confirmed: purchases.filter((t) => t.state === 'confirmed').length,
      owner: (await sandbox.ticket(EVENT_ID.toString(), '1')).owner,
    }).toEqual({ before: 'confirmed', state: 'confirmed', signed: 1, confirmed: 1, owner: buyerAddress });
    expect(a.output()).toMatch(/durable work fenced off \(lease lost\)/);
    await a.stop();
  }, 120_000);

  it('B closes the order (the listing expired); A, resumed with its stale batch, signs and sends nothing', async () => {
    const price = 3_000_002n;
    const { now_ms: nowMs } = await sandbox.admin<{ now_ms: number }>('POST', '/clock/advance', { ms: 0 });
    await sandbox.admin('POST', '/listings', {
      event_id: EVENT_ID.toString(),
      ticket_id: '2',
      seller: { kind: 'user', subject: 'zombie-seller' },
      ask_price_minor: price.toString(),
      expires_at: String(Math.floor(nowMs / 1000) + 120),
    });
    let closed: OrderView | undefined;
    const { order } = await frozenDrive(2n, price, async (id) => {
      await sandbox.admin('POST', '/clock/advance', { ms: 180_000 });
      closed = await waitFinal(id);
    });
    await new Promise((r) => setTimeout(r, 1_500));
    const final = await waitFinal(order.id);
    expect({
      before: [closed?.state, closed?.failure?.code],
      state: [final.state, final.failure?.code],
      signed: (await purchasesOf(2n)).length,
    }).toEqual({
      before: ['rejected', 'LISTING_GONE'],
      state: ['rejected', 'LISTING_GONE'],
      signed: 0,
    });
    expect(a.output()).toMatch(/durable work fenced off \(lease lost\)/);
    await a.stop();
  }, 120_000);
});
