import { generateApiKey } from '../../src/auth/api-key';
import { audit, breachesOf, type OrderRecord } from './chaos.audit';
import type { ChaosReport } from './chaos.report';
import { disruptionSchedule, runDisruptions } from './disruptions';
import { LISTINGS_PER_EVENT, mapLimit, seedMarket, type PlannedOrder } from './market';
import { OrdersClient, percentile, seededRandom, type OrderView } from './orders-client';
import { ProcessGroup, sleep } from './processes';
import { ReplicaLogWatch } from './replica-log';
import { SandboxProcess } from './sandbox-process';
import { replicaEnv } from './service-env';
import { ServiceReplica } from './service-replica';
import { catalogBreachesOf } from './catalog-audit';
import { webhookBreachesOf } from './webhook-audit';
import { WebhookCheck } from './webhooks-check';

export { formatChaosReport, type ChaosReport } from './chaos.report';

export interface ChaosOptions {
  orders: number;
  concurrency: number;
  /** `kill -9` of one random replica, restarted after 0.2–1 s. */
  kills: number;
  seed: string;
  /** A fresh database the replicas migrate (see provisionDatabase). */
  databaseUrl: string;
  /**
   * Stops the run's PostgreSQL immediately and starts it again after `downMs` (ChaosDatabase.restart).
   * Without it the PostgreSQL restarts are skipped (and reported as skipped).
   */
  restartDatabase?: ((downMs: number) => Promise<void>) | null;
  /** PostgreSQL restarts (default 1), around 30 % of the run. */
  pgRestarts?: number;
  /** How long PostgreSQL stays down before it is started again (default 1 s; its start adds ~1–3 s). */
  pgDownMs?: number;
  /** SIGSTOP of one replica past its leases, then SIGCONT (default 1), around 50 % of the run. */
  freezes?: number;
  /** How long a frozen replica stays stopped (default two leases and a second). */
  freezeMs?: number;
  /** `kill -9` of both replicas at once, then both restarted (default 1), around 70 % of the run. */
  doubleKills?: number;
  /** Share of upstream calls that fail, per faulted operation (default 0.2). */
  faultRate?: number;
  /** Share of listing pages served with null-id items (default 0.1; 30 % of such a page's items). */
  nullIdPages?: number;
  /** Share of the orders that go to contended listings (default 0.1). */
  contendedShare?: number;
  /** Buyers per contended listing, sent at the same moment to different replicas (default 3). */
  contenders?: number;
  /** Share of orders POSTed a second time with the same key to the other replica (default 0.1). */
  repeatShare?: number;
  /** Share of orders sent at a price the listing does not have: must end `rejected`, nothing signed. */
  wrongPriceShare?: number;
  /** Every order must be final within this long after the last fault (default 60 s). */
  finalWithinMs?: number;
  /** After that, how long the webhook deliveries may take to drain (default 60 s). */
  webhooksDrainWithinMs?: number;
  /** Per-order client wait for a final state while orders run (default 45 s; the audit waits separately). */
  orderWaitMs?: number;
  buyers?: number;
  landingDelayMs?: number;
  log?: (line: string) => void;
  /** Where the started processes are registered (the entry point stops them on SIGINT too). */
  group?: ProcessGroup;
}

const FAULTED_OPERATIONS = ['signUser', 'submit', 'listings', 'purchaseStatus'] as const;
const INSTRUCTION = 'accept_offer_v2';
const FAULT_BUDGET = 1_000_000;
/** Items blanked on a null-id page: most pages then hold one the service cannot rule out. */
const NULL_ID_FRACTION = 0.3;

/**
 * Fault rules: per operation about `rate` of calls fail, spread over the fault classes the issue names (5xx,
 * 429 with Retry-After, reset, hang, executed-but-response-lost, and `status: null` on submit); and
 * `nullIdPages` of listing pages come with null `event_id`/`ticket_id` in some items (contract 2.7, 2.8 rule
 * 2). Rates are drawn from the sandbox's seeded fault PRNG, so a seed replays the same sequence for the same
 * request order.
 */
export function chaosFaultRules(rate: number, nullIdPages = 0): Record<string, unknown>[] {
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
  if (nullIdPages > 0)
    rules.push({ operation: 'listings', kind: 'null_ids', rate: nullIdPages, fraction: NULL_ID_FRACTION });
  // A finite `times` makes GET /__sandbox/faults show what is left, hence how many fired.
  return rules.map((rule) => ({ ...rule, times: FAULT_BUDGET }));
}

/** How many times the rules fired, null-id pages apart (GET /__sandbox/faults lists what is left). */
function firedFaults(rules: { kind?: string; times?: number }[]): { faults: number; nullIdPages: number } {
  let faults = 0;
  let nullIdPages = 0;
  for (const rule of rules) {
    const fired = FAULT_BUDGET - (rule.times ?? FAULT_BUDGET);
    if (rule.kind === 'null_ids') nullIdPages += fired;
    else faults += fired;
  }
  return { faults, nullIdPages };
}

/**
 * One chaos run: a standalone sandbox (faults on), two replicas on one database, `orders` orders at
 * `concurrency` (contended listings' orders sent together) while the disruptions run one after the other
 * (single and double `kill -9`, a PostgreSQL restart, a replica frozen past its leases); then faults off, a
 * bounded wait until every order is final, and an audit against the sandbox ledger. Every process it starts
 * is stopped, also on failure. The returned report lists each breach (an empty `breaches` is a pass).
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  const rng = seededRandom(`chaos|${options.seed}`);
  const faultRate = options.faultRate ?? 0.2;
  const nullIdPages = options.nullIdPages ?? 0.1;
  const finalWithinMs = options.finalWithinMs ?? 60_000;
  const group = options.group ?? new ProcessGroup();
  const started = Date.now();
  const replicaLog = new ReplicaLogWatch(group);
  let hooks: WebhookCheck | null = null;
  try {
    const sandbox = await SandboxProcess.start(group, {
      seed: options.seed,
      landingDelayMs: options.landingDelayMs ?? 500,
    });
    log(`sandbox pid ${sandbox.proc.pid} at ${sandbox.url}`);
    const units = await seedMarket(
      sandbox,
      {
        orders: options.orders,
        seed: options.seed,
        buyers: options.buyers ?? 50,
        contendedShare: options.contendedShare ?? 0.1,
        contenders: options.contenders ?? 3,
        wrongPriceShare: options.wrongPriceShare ?? 0.03,
        repeatShare: options.repeatShare ?? 0.1,
      },
      rng,
    );
    const contended = units.filter((u) => u.orders.length > 1).length;
    log(
      `seeded ${units.length} listings over ${Math.ceil(units.length / LISTINGS_PER_EVENT)} events, ` +
        `${contended} of them contended by ${options.contenders ?? 3} buyers`,
    );

    const apiKey = generateApiKey();
    const env = replicaEnv({ databaseUrl: options.databaseUrl, sandboxUrl: sandbox.url, apiKey });
    const leaseMs = Math.max(Number(env.CHECKOUT_LEASE_MS), Number(env.TX_LEASE_MS));
    const replicas = [
      await ServiceReplica.create('replica-a', group, env),
      await ServiceReplica.create('replica-b', group, env),
    ];
    // One after the other: the first applies the migrations and registers the key.
    for (const replica of replicas) {
      await replica.start();
      log(`${replica.name} pid ${replica.proc?.pid} at ${replica.url}`);
    }
    // Issue 24: every order's events go to a receiver of the run's, registered before the first order.
    hooks = await WebhookCheck.start({
      seed: options.seed,
      serviceUrl: replicas[0].url,
      apiKey,
      freshMs: Number(env.WEBHOOKS_LEASE_MS) - 2_000,
      // The run's events (the endpoint filter takes at most 100): their catalog events are audited too.
      eventIds: [...new Set(units.map((u) => u.orders[0].body.event_id))].slice(0, 100),
    });
    log(`webhook receiver at ${hooks.receiver.url}, endpoint ${hooks.endpointId}`);
    await sandbox.setFaults(chaosFaultRules(faultRate, nullIdPages), `faults|${options.seed}`);
    let lastFaultAt = Date.now();
    log(
      `faults on (${Math.round(faultRate * 100)}% of ${FAULTED_OPERATIONS.join(', ')} calls; ` +
        `${Math.round(nullIdPages * 100)}% of listing pages with null ids)`,
    );

    const client = new OrdersClient(replicas, apiKey);
    const records: OrderRecord[] = [];
    let idempotentRepeats = 0;
    let idempotencyMismatches = 0;
    let startedOrders = 0;
    let nextUnit = 0;
    const details: string[] = [];
    const note = (line: string): void => {
      if (details.length < 30) details.push(line);
    };

    const runOrder = async (planned: PlannedOrder, w: number): Promise<void> => {
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
        return;
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
    };
    // A contended listing's orders leave together, the j-th to replica w + j: different replicas.
    const worker = async (w: number): Promise<void> => {
      while (nextUnit < units.length) {
        const unit = units[nextUnit++];
        startedOrders += unit.orders.length;
        await Promise.all(unit.orders.map((planned, j) => runOrder(planned, w + j)));
      }
    };

    const steps = disruptionSchedule(options.orders, {
      kills: options.kills,
      pgRestarts: options.pgRestarts ?? 1,
      freezes: options.freezes ?? 1,
      doubleKills: options.doubleKills ?? 1,
    });
    const [disruptions] = await Promise.all([
      runDisruptions(steps, () => startedOrders, {
        replicas,
        restartDatabase: options.restartDatabase ?? null,
        freezeMs: options.freezeMs ?? 2 * leaseMs + 1_000,
        pgDownMs: options.pgDownMs ?? 1_000,
        rng,
        log,
        onFault: () => {
          lastFaultAt = Date.now();
        },
      }),
      ...Array.from({ length: Math.max(1, options.concurrency) }, (_, w) => worker(w)),
    ]);
    const fired = firedFaults(
      (await sandbox.admin<{ rules: { kind?: string; times?: number }[] }>('GET', '/faults')).rules,
    );
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
    const figures = audit({
      seed: options.seed,
      records,
      views,
      ledger,
      lastFaultAt,
      finalWithinMs,
      note,
    });
    const webhooksDrainWithinMs = options.webhooksDrainWithinMs ?? 60_000;
    log(`audited; waiting up to ${webhooksDrainWithinMs / 1000} s for the webhook deliveries to drain`);
    const webhooks = await hooks.finish({
      databaseUrl: options.databaseUrl,
      client,
      drainWithinMs: webhooksDrainWithinMs,
      note,
    });
    const finalTimes = records.flatMap((r) => (r.finalAfterMs === null ? [] : [r.finalAfterMs]));
    const { tally } = client;
    const http = {
      requests: tally.requests,
      networkErrors: tally.networkErrors,
      status500: tally.status500,
      unavailableWithRetryAfter: tally.unavailableWithRetryAfter,
      other5xx: tally.other5xx,
      byStatus: Object.fromEntries([...tally.byStatus].sort(([a], [b]) => a - b)),
      samples: tally.samples.map((s) => ({ ...s, log: logLinesOf(group, s.requestId) })),
    };
    return {
      ...figures,
      disruptions,
      replicaStarts: replicas.reduce((n, r) => n + r.starts, 0),
      leaseMs,
      idempotentRepeats,
      idempotencyMismatches,
      faultsInjected: fired.faults,
      nullIdPages: fired.nullIdPages,
      http,
      ...replicaLog.figures(),
      durationMs: Date.now() - started,
      finalP50Ms: percentile(finalTimes, 50),
      finalP99Ms: percentile(finalTimes, 99),
      lastFaultToAllFinalMs: allFinalAt === null ? null : allFinalAt - lastFaultAt,
      finalWithinMs,
      webhooks,
      breaches: [
        ...breachesOf({
          ...figures,
          idempotencyMismatches,
          http500: http.status500,
          httpOther5xx: http.other5xx,
        }),
        ...webhookBreachesOf(webhooks),
        ...catalogBreachesOf(webhooks),
      ],
      details,
    };
  } finally {
    await group.stopAll();
    await hooks?.close();
  }
}

/** The replicas' log lines that name `requestId` (at most 5, each cut to 500 characters). */
function logLinesOf(group: ProcessGroup, requestId: string): string[] {
  return group
    .started()
    .flatMap((p) => p.output().split('\n'))
    .filter((line) => line.includes(`"${requestId}"`))
    .slice(0, 5)
    .map((line) => line.slice(0, 500));
}
