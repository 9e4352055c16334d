import { generateApiKey } from '../../src/auth/api-key';
import { OrdersClient, percentile, seededRandom, type OrderBody, type OrderView } from './orders-client';
import { ProcessGroup, sleep, waitFor } from './processes';
import { SandboxProcess, type LedgerTransaction } from './sandbox-process';
import { replicaEnv } from './service-env';
import { ServiceReplica } from './service-replica';

export interface ChaosOptions {
  orders: number;
  concurrency: number;
  kills: number;
  seed: string;
  /** A fresh database the replicas migrate (see provisionDatabase). */
  databaseUrl: string;
  /** Share of upstream calls that fail, per faulted operation (default 0.2). */
  faultRate?: number;
  /** Share of orders POSTed a second time with the same key to the other replica (default 0.1). */
  repeatShare?: number;
  /** Share of orders sent at a price the listing does not have: must end `rejected`, nothing signed. */
  wrongPriceShare?: number;
  /** Every order must be final within this long after the last fault (default 60 s). */
  finalWithinMs?: number;
  /** Per-order client wait for a final state while orders run (default 45 s; the audit waits separately). */
  orderWaitMs?: number;
  buyers?: number;
  landingDelayMs?: number;
  log?: (line: string) => void;
  /** Where the started processes are registered (the entry point stops them on SIGINT too). */
  group?: ProcessGroup;
}

export interface ChaosReport {
  seed: string;
  orders: number;
  accepted: number;
  confirmed: number;
  rejected: number;
  failed: number;
  landedWithError: number;
  kills: number;
  replicaStarts: number;
  idempotentRepeats: number;
  faultsInjected: number;
  durationMs: number;
  finalP50Ms: number;
  finalP99Ms: number;
  lastFaultToAllFinalMs: number | null;
  /** Final states with their failure codes, e.g. `rejected/PRICE_CHANGED: 30` (wrong-price orders included). */
  outcomes: Record<string, number>;
  // Breaches: every one must be 0.
  duplicatePurchases: number;
  lostOrders: number;
  completeWithoutConfirmed: number;
  notFinalInTime: number;
  notAccepted: number;
  idempotencyMismatches: number;
  ledgerWithoutOrder: number;
  breaches: string[];
  /** Up to 20 lines naming the orders behind the breaches. */
  details: string[];
}

const FAULTED_OPERATIONS = ['signUser', 'submit', 'listings', 'purchaseStatus'] as const;
const CHAOS_EVENT_BASE = 7_000_000n;
const LISTINGS_PER_EVENT = 10;
const INSTRUCTION = 'accept_offer_v2';
const FAULT_BUDGET = 1_000_000;

/**
 * Fault rules: per operation about `rate` of calls fail, spread over the fault classes the issue names (5xx,
 * 429 with Retry-After, reset, hang, executed-but-response-lost, and `status: null` on submit). Rates are drawn
 * from the sandbox's seeded fault PRNG, so a seed replays the same sequence for the same request order.
 */
export function chaosFaultRules(rate: number): Record<string, unknown>[] {
  const share = (weight: number): number => Number((rate * weight).toFixed(4));
  const rules: Record<string, unknown>[] = [];
  for (const operation of FAULTED_OPERATIONS) {
    rules.push(
      { operation, kind: 'error', status: operation === 'submit' ? 502 : 503, rate: share(0.25) },
      { operation, kind: 'rate_limit', retryAfter: 'seconds', retryAfterSeconds: 1, rate: share(0.15) },
      { operation, kind: 'reset', rate: share(0.15) },
      { operation, kind: 'hang', rate: share(0.1) },
    );
    if (operation !== 'listings') rules.push({ operation, kind: 'response_lost', rate: share(0.2) });
    if (operation === 'submit') rules.push({ operation, kind: 'status_null', rate: share(0.15) });
  }
  // A finite `times` makes GET /__sandbox/faults show what is left, hence how many fired.
  return rules.map((rule) => ({ ...rule, times: FAULT_BUDGET }));
}

interface PlannedOrder {
  index: number;
  key: string;
  body: OrderBody;
  wrongPrice: boolean;
  repeat: boolean;
}

interface OrderRecord {
  planned: PlannedOrder;
  accepted: OrderView | null;
  refusal: string | null;
  acceptedAt: number;
  finalAfterMs: number | null;
}

/**
 * One chaos run: a standalone sandbox (faults on), two replicas on one database, `orders` orders at
 * `concurrency` with `kills` random `kill -9` restarts while they run; then faults off, a bounded wait until
 * every order is final, and an audit against the sandbox ledger. Every process it starts is stopped, also on
 * failure. The returned report lists each breach (an empty `breaches` is a pass).
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  const rng = seededRandom(`chaos|${options.seed}`);
  const faultRate = options.faultRate ?? 0.2;
  const finalWithinMs = options.finalWithinMs ?? 60_000;
  const group = options.group ?? new ProcessGroup();
  const started = Date.now();
  try {
    const sandbox = await SandboxProcess.start(group, {
      seed: options.seed,
      landingDelayMs: options.landingDelayMs ?? 500,
    });
    log(`sandbox pid ${sandbox.proc.pid} at ${sandbox.url}`);
    const plan = await seedMarket(sandbox, options, rng);
    log(`seeded ${plan.length} listings over ${Math.ceil(plan.length / LISTINGS_PER_EVENT)} events`);

    const apiKey = generateApiKey();
    const env = replicaEnv({ databaseUrl: options.databaseUrl, sandboxUrl: sandbox.url, apiKey });
    const replicas = [
      await ServiceReplica.create('replica-a', group, env),
      await ServiceReplica.create('replica-b', group, env),
    ];
    // One after the other: the first applies the migrations and registers the key.
    for (const replica of replicas) {
      await replica.start();
      log(`${replica.name} pid ${replica.proc?.pid} at ${replica.url}`);
    }
    await sandbox.setFaults(chaosFaultRules(faultRate), `faults|${options.seed}`);
    let lastFaultAt = Date.now();
    log(`faults on (${Math.round(faultRate * 100)}% of ${FAULTED_OPERATIONS.join(', ')} calls)`);

    const client = new OrdersClient(replicas, apiKey);
    const records: OrderRecord[] = [];
    let idempotentRepeats = 0;
    let idempotencyMismatches = 0;
    let startedOrders = 0;
    let next = 0;
    const details: string[] = [];
    const note = (line: string): void => {
      if (details.length < 20) details.push(line);
    };

    const worker = async (w: number): Promise<void> => {
      while (next < plan.length) {
        const planned = plan[next++];
        startedOrders++;
        const t0 = Date.now();
        const outcome = await client.post(planned.key, planned.body, w);
        const record: OrderRecord = {
          planned,
          accepted: outcome.order,
          refusal: outcome.refusal,
          acceptedAt: Date.now(),
          finalAfterMs: null,
        };
        records.push(record);
        if (!outcome.order) {
          note(`order ${planned.key}: not accepted (${outcome.status} ${outcome.refusal ?? ''})`);
          continue;
        }
        if (planned.repeat) {
          idempotentRepeats++;
          const again = await client.post(planned.key, planned.body, w + 1);
          if (!again.order || again.order.id !== outcome.order.id || !again.replayed) {
            idempotencyMismatches++;
            note(
              `order ${planned.key}: repeat gave ${again.status} ${again.order?.id ?? ''} replayed=${again.replayed}`,
            );
          }
        }
        const final = await client.waitFinal(outcome.order.id, w, options.orderWaitMs ?? 45_000);
        if (final?.final) record.finalAfterMs = Date.now() - t0;
      }
    };

    let kills = 0;
    const killer = async (): Promise<void> => {
      for (let k = 0; k < options.kills; k++) {
        const threshold = Math.floor(((k + 1) * plan.length) / (options.kills + 1));
        await waitFor(`order ${threshold} started`, () => startedOrders >= threshold, 30 * 60_000, 50);
        await sleep(Math.floor(rng() * 500));
        const victim = replicas[rng() < 0.5 ? 0 : 1];
        const pid = victim.proc?.pid;
        await victim.kill9();
        kills++;
        lastFaultAt = Date.now();
        log(`kill -9 ${victim.name} pid ${pid} (${kills}/${options.kills}) at order ${startedOrders}`);
        await sleep(200 + Math.floor(rng() * 800));
        await victim.start();
        lastFaultAt = Date.now();
        log(`${victim.name} restarted as pid ${victim.proc?.pid}`);
      }
    };

    await Promise.all([
      killer(),
      ...Array.from({ length: Math.max(1, options.concurrency) }, (_, w) => worker(w)),
    ]);
    const faultStats = await sandbox.admin<{ rules: { times?: number }[] }>('GET', '/faults');
    await sandbox.clearFaults();
    lastFaultAt = Date.now();
    log(`orders sent; faults off; waiting up to ${finalWithinMs / 1000} s for every order to be final`);

    // Bounded wait: every accepted order final (asked through the API, any replica).
    const accepted = records.filter((r) => r.accepted);
    const finals = new Map<string, OrderView>();
    let allFinalAt: number | null = null;
    const deadline = lastFaultAt + finalWithinMs;
    while (Date.now() < deadline) {
      const pending = accepted.filter((r) => !finals.has(r.accepted?.id ?? ''));
      await mapLimit(pending, 20, async (r, i) => {
        const view = await client.get(r.accepted?.id ?? '', i);
        if (view?.final) finals.set(view.id, view);
      });
      if (finals.size === accepted.length) {
        allFinalAt = Date.now();
        break;
      }
      await sleep(500);
    }

    // Audit.
    const views = new Map<string, OrderView | null | undefined>();
    await mapLimit(accepted, 20, async (r, i) => {
      const id = r.accepted?.id ?? '';
      views.set(id, finals.get(id) ?? (await client.getDefinite(id, i)));
    });
    const ledger = await sandbox.transactions(INSTRUCTION);
    const report = audit({
      seed: options.seed,
      records,
      views,
      ledger,
      lastFaultAt,
      finalWithinMs,
      note,
    });
    const finalTimes = records.flatMap((r) => (r.finalAfterMs === null ? [] : [r.finalAfterMs]));
    return {
      ...report,
      kills,
      replicaStarts: replicas.reduce((n, r) => n + r.starts, 0),
      idempotentRepeats,
      idempotencyMismatches,
      faultsInjected: faultCount(faultStats.rules, chaosFaultRules(faultRate).length),
      durationMs: Date.now() - started,
      finalP50Ms: percentile(finalTimes, 50),
      finalP99Ms: percentile(finalTimes, 99),
      lastFaultToAllFinalMs: allFinalAt === null ? null : allFinalAt - lastFaultAt,
      breaches: breachesOf({ ...report, idempotencyMismatches }),
      details,
    };
  } finally {
    await group.stopAll();
  }
}

/** Events and listings straight on the sandbox ledger (one per order), buyers funded for what they buy. */
async function seedMarket(
  sandbox: SandboxProcess,
  options: ChaosOptions,
  rng: () => number,
): Promise<PlannedOrder[]> {
  const buyers = Array.from({ length: options.buyers ?? 50 }, (_, i) => `chaos-buyer-${i}`);
  const addresses = new Map<string, string>();
  for (const buyer of buyers) addresses.set(buyer, await sandbox.userAddress(buyer));
  const spend = new Map<string, bigint>();
  const plan: PlannedOrder[] = [];
  const events = Math.ceil(options.orders / LISTINGS_PER_EVENT);
  for (let e = 0; e < events; e++) await sandbox.createEvent(CHAOS_EVENT_BASE + BigInt(e));
  const indexes = Array.from({ length: options.orders }, (_, i) => i);
  await mapLimit(indexes, 10, async (i) => {
    const eventId = CHAOS_EVENT_BASE + BigInt(Math.floor(i / LISTINGS_PER_EVENT));
    const price = BigInt(1_000_000 + Math.floor(rng() * 99_000_000));
    const listing = await sandbox.seedListing(eventId, BigInt(i + 1), `chaos-seller-${i % 17}`, price);
    const buyer = buyers[Math.floor(rng() * buyers.length)];
    const wrongPrice = rng() < (options.wrongPriceShare ?? 0.03);
    spend.set(buyer, (spend.get(buyer) ?? 0n) + price);
    plan[i] = {
      index: i,
      key: `chaos-${options.seed}-${i}`,
      body: {
        buyer_subject: buyer,
        buyer_address: addresses.get(buyer) ?? '',
        event_id: listing.event_id,
        ticket_id: listing.ticket_id,
        expected_price_minor: (wrongPrice ? price + 1n : price).toString(),
      },
      wrongPrice,
      repeat: rng() < (options.repeatShare ?? 0.1),
    };
  });
  for (const [buyer, amount] of spend) await sandbox.fund(buyer, amount);
  return plan;
}

type AuditFigures = Pick<
  ChaosReport,
  | 'seed'
  | 'orders'
  | 'accepted'
  | 'confirmed'
  | 'rejected'
  | 'failed'
  | 'landedWithError'
  | 'duplicatePurchases'
  | 'lostOrders'
  | 'completeWithoutConfirmed'
  | 'notFinalInTime'
  | 'notAccepted'
  | 'ledgerWithoutOrder'
  | 'outcomes'
>;

/**
 * The audit, against the sandbox ledger (the truth) rather than the service's own records:
 * - duplicate purchases: confirmed accept_offer_v2 transactions beyond the first per listing, and per
 *   upstream idempotency key;
 * - lost orders: accepted (202) but unknown to every replica (404) or never answering;
 * - complete without `confirmed`: the order says confirmed but its ledger transaction is not a confirmed
 *   purchase of that listing by that buyer;
 * - ledger without order: the ledger moved a listing (confirmed) whose order does not say confirmed, or a
 *   wrong-price order had anything signed;
 * - not final in time: final_at missing, or later than `finalWithinMs` after the last fault.
 */
export function audit(input: {
  seed: string;
  records: readonly OrderRecord[];
  views: ReadonlyMap<string, OrderView | null | undefined>;
  ledger: readonly LedgerTransaction[];
  lastFaultAt: number;
  finalWithinMs: number;
  note: (line: string) => void;
}): AuditFigures {
  const { records, views, ledger, note } = input;
  const byListing = new Map<string, LedgerTransaction[]>();
  const confirmedByKey = new Map<string, number>();
  const byId = new Map<string, LedgerTransaction>();
  for (const tx of ledger) {
    byId.set(tx.custodialTransactionId, tx);
    for (const item of tx.items) {
      const k = listingKey(item.event_id, item.ticket_id);
      byListing.set(k, [...(byListing.get(k) ?? []), tx]);
    }
    if (tx.state === 'confirmed')
      confirmedByKey.set(tx.idempotencyKey, (confirmedByKey.get(tx.idempotencyKey) ?? 0) + 1);
  }
  let duplicatePurchases = 0;
  for (const count of confirmedByKey.values()) duplicatePurchases += Math.max(0, count - 1);

  const figures: AuditFigures = {
    seed: input.seed,
    orders: records.length,
    accepted: 0,
    confirmed: 0,
    rejected: 0,
    failed: 0,
    landedWithError: 0,
    duplicatePurchases: 0,
    lostOrders: 0,
    completeWithoutConfirmed: 0,
    notFinalInTime: 0,
    notAccepted: 0,
    ledgerWithoutOrder: 0,
    outcomes: {},
  };
  for (const record of records) {
    const { planned } = record;
    const k = listingKey(planned.body.event_id, planned.body.ticket_id);
    const txs = byListing.get(k) ?? [];
    const confirmedTxs = txs.filter((t) => t.state === 'confirmed');
    if (confirmedTxs.length > 1) {
      duplicatePurchases += confirmedTxs.length - 1;
      note(`listing ${k}: ${confirmedTxs.length} confirmed purchases`);
    }
    if (!record.accepted) {
      figures.notAccepted++;
      if (confirmedTxs.length > 0) {
        figures.ledgerWithoutOrder++;
        note(`listing ${k}: purchased, but its order was never accepted`);
      }
      continue;
    }
    figures.accepted++;
    const view = views.get(record.accepted.id);
    if (!view) {
      figures.lostOrders++;
      note(`order ${record.accepted.id} (${planned.key}): ${view === null ? '404' : 'no answer'}`);
      continue;
    }
    const outcome = `${view.state}${view.failure ? `/${view.failure.code}` : ''}${planned.wrongPrice ? ' (wrong price sent)' : ''}`;
    figures.outcomes[outcome] = (figures.outcomes[outcome] ?? 0) + 1;
    if (view.state === 'confirmed') figures.confirmed++;
    else if (view.state === 'rejected') figures.rejected++;
    else if (view.state === 'failed') figures.failed++;
    else if (view.state === 'landed_with_error') figures.landedWithError++;

    if (!view.final_at || Date.parse(view.final_at) > input.lastFaultAt + input.finalWithinMs) {
      figures.notFinalInTime++;
      note(`order ${view.id}: ${view.state}, final_at ${view.final_at ?? 'none'}`);
    }
    if (view.state === 'confirmed') {
      const tx = byId.get(view.transaction?.custodial_transaction_id ?? '');
      const ok =
        tx !== undefined &&
        tx.state === 'confirmed' &&
        tx.subject === planned.body.buyer_subject &&
        tx.items.some((i) => listingKey(i.event_id, i.ticket_id) === k);
      if (!ok) {
        figures.completeWithoutConfirmed++;
        note(`order ${view.id}: confirmed, ledger transaction ${tx ? tx.state : 'missing'}`);
      }
    } else if (confirmedTxs.length > 0) {
      figures.ledgerWithoutOrder++;
      note(`order ${view.id}: ${view.state}, but the ledger confirmed a purchase of ${k}`);
    }
    if (planned.wrongPrice && (view.state !== 'rejected' || txs.length > 0)) {
      figures.ledgerWithoutOrder++;
      note(`order ${view.id}: wrong price, state ${view.state}, ${txs.length} signed transactions`);
    }
  }
  figures.duplicatePurchases = duplicatePurchases;
  return figures;
}

function listingKey(eventId: string, ticketId: string): string {
  return `${eventId}/${ticketId}`;
}

function breachesOf(r: AuditFigures & { idempotencyMismatches: number }): string[] {
  const checks: [string, number][] = [
    ['duplicate purchases', r.duplicatePurchases],
    ['lost orders', r.lostOrders],
    ['orders complete without a confirmed ledger transaction', r.completeWithoutConfirmed],
    ['orders not final within the bound after the last fault', r.notFinalInTime],
    ['orders never accepted', r.notAccepted],
    ['idempotent repeats that did not replay the same order', r.idempotencyMismatches],
    ['ledger purchases the order does not show', r.ledgerWithoutOrder],
  ];
  return checks.filter(([, n]) => n !== 0).map(([what, n]) => `${what}: ${n}`);
}

function faultCount(rules: { times?: number }[], total: number): number {
  const left = rules.reduce((n, r) => n + (r.times ?? FAULT_BUDGET), 0);
  return total * FAULT_BUDGET - left;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function mapLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

export function formatChaosReport(r: ChaosReport): string {
  const lines = [
    `chaos seed=${r.seed}: ${r.orders} orders, ${r.kills} kill -9 restarts (${r.replicaStarts} replica starts), ${r.faultsInjected} faults injected, ${(r.durationMs / 1000).toFixed(1)} s`,
    `  accepted ${r.accepted}: confirmed ${r.confirmed}, rejected ${r.rejected}, failed ${r.failed}, landed_with_error ${r.landedWithError}; ${r.idempotentRepeats} idempotent repeats`,
    `  time to final while running: p50 ${r.finalP50Ms} ms, p99 ${r.finalP99Ms} ms; last fault → all final: ${r.lastFaultToAllFinalMs === null ? 'NOT REACHED' : `${r.lastFaultToAllFinalMs} ms`}`,
    `  outcomes: ${Object.entries(r.outcomes)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
    `  duplicate purchases:                 ${r.duplicatePurchases}`,
    `  lost orders:                         ${r.lostOrders}`,
    `  complete without confirmed:          ${r.completeWithoutConfirmed}`,
    `  not final within 60 s of last fault: ${r.notFinalInTime}`,
    `  never accepted:                      ${r.notAccepted}`,
    `  idempotency mismatches:              ${r.idempotencyMismatches}`,
    `  ledger purchases the order misses:   ${r.ledgerWithoutOrder}`,
    r.breaches.length === 0 ? 'PASS: no breach' : `FAIL: ${r.breaches.join('; ')}`,
    ...r.details.map((d) => `  - ${d}`),
  ];
  return lines.join('\n');
}
