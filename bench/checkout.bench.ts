import { createServer, type Server } from 'node:http';
import { Client } from 'pg';
import { generateApiKey } from '../src/auth/api-key';
import { CheckoutConfig } from '../src/config/checkout.config';
import { provisionDatabase } from './chaos/database';
import { percentile } from './chaos/orders-client';
import { ProcessGroup, sleep } from './chaos/processes';
import { SANDBOX_API_KEY, SandboxProcess } from './chaos/sandbox-process';
import { replicaEnv } from './chaos/service-env';
import { ServiceReplica } from './chaos/service-replica';
import { perMillion, tableSizes } from './db-size';
import { printPgStats } from './pg-stats';
import type { BenchReport } from './report';

const EVENT_ID = 9_100_000n;
const POLL_MS = 10;
const LANDING_DELAY_MS = 100;
const FINAL_CHECK_MS = 25;

interface Listing {
  event_id: string;
  ticket_id: string;
  ask_price_minor: string;
  permit_version: string;
  seller_payout: string;
  royalty_destinations: string[];
  ticket_type_config: string | null;
  stablecoin_mint: string;
  listing_integrator_identity: string;
}

const ms = (v: number): string => `${v.toFixed(1)} ms`;
const f1 = (v: string | undefined): string => Number(v ?? NaN).toFixed(1);

async function upstream<T>(url: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(url, {
    ...init,
    headers: {
      'x-api-key': SANDBOX_API_KEY,
      'content-type': 'application/json',
      ...(init.headers as Record<string, string> | undefined),
    },
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/**
 * The sandbox's own time for one purchase, driven directly against its API the way checkout drives it:
 * live read of the event's listings, accept_offer_v2 signing, submission, then re-sending the same bytes every
 * POLL_MS (the service's track cadence) until the ledger says confirmed. No database, no HTTP front.
 */
async function directPurchase(
  sandboxUrl: string,
  protocol: Record<string, string>,
  { subject: buyer, address: buyerAddress }: { subject: string; address: string },
  ticketId: string,
  phases: Record<string, number[]>,
): Promise<{ total: number; firstAnswer: number }> {
  const t0 = performance.now();
  let mark = t0;
  const phase = (name: string): void => {
    const now = performance.now();
    (phases[name] ??= []).push(now - mark);
    mark = now;
  };
  const page = await upstream<{ items: Listing[] }>(
    `${sandboxUrl}/indexer/listings/active?eventId=${EVENT_ID}&limit=1000`,
  );
  const listing = page.items.find((l) => l.ticket_id === ticketId);
  if (!listing) throw new Error(`listing ${ticketId} not found`);
  phase('read');
  const signed = await upstream<{ signedTransaction: string }>(
    `${sandboxUrl}/wallets/users/${buyer}/signatures`,
    {
      method: 'POST',
      headers: { 'idempotency-key': `bench-direct-${ticketId}` },
      body: JSON.stringify({
        platformInstructions: {
          instruction: 'accept_offer_v2',
          params: [
            {
              event_id: listing.event_id,
              ticket_id: listing.ticket_id,
              permit_version: listing.permit_version,
              buyer: buyerAddress,
              integrator_authority: protocol.integrator_authority,
              seller_payout: listing.seller_payout,
              royalty_destinations: listing.royalty_destinations,
              ticket_type_config: listing.ticket_type_config,
              integrator_identity: protocol.integrator_identity,
              stablecoin_mint: listing.stablecoin_mint,
            },
          ],
        },
      }),
    },
  );
  phase('sign');
  const submit = (): Promise<{ status: string | null }> =>
    upstream(`${sandboxUrl}/transactions/submissions`, {
      method: 'POST',
      body: JSON.stringify({ signedTransaction: signed.signedTransaction }),
    });
  let firstAnswer = 0;
  for (let i = 0; i < 1000; i++) {
    const { status } = await submit();
    if (i === 0) {
      phase('submit');
      firstAnswer = performance.now() - t0;
    }
    if (status === 'confirmed') {
      phase('landed');
      return { total: performance.now() - t0, firstAnswer };
    }
    if (status !== 'processing') throw new Error(`direct purchase ended ${status}`);
    await sleep(POLL_MS);
  }
  throw new Error('direct purchase did not confirm');
}

/** The tables an order writes to (checkout, its ledger transaction, their outbox events and deliveries). */
const ORDER_TABLES = [
  'orders',
  'order_steps',
  'order_traces',
  'ledger_transactions',
  'ledger_transaction_events',
  'ledger_transaction_orders',
  'outbox_events',
  'webhook_deliveries',
] as const;

/**
 * `npm run bench -- checkout`: the service's own overhead per order. Orders are placed one at a time
 * (no queueing) against one replica with its checkout polls at POLL_MS, interleaved with the same purchase
 * driven directly against the sandbox. Service time = the order's `final_at` (committed by the service) minus
 * the moment the client sent POST /v1/orders; overhead = service time minus the direct time of the paired
 * purchase. Target: overhead p50 < 5 ms.
 */
export async function benchCheckout(orders: number): Promise<BenchReport> {
  const group = new ProcessGroup();
  const database = await provisionDatabase(process.env.DATABASE_URL || undefined);
  const db = new Client({ connectionString: database.url });
  let receiver: Server | undefined;
  try {
    const sandbox = await SandboxProcess.start(group, {
      seed: 'bench-checkout',
      landingDelayMs: LANDING_DELAY_MS,
    });
    await sandbox.createEvent(EVENT_ID);
    const apiKey = generateApiKey();
    const defaults = new CheckoutConfig();
    const replica = await ServiceReplica.create(
      'bench-replica',
      group,
      replicaEnv({
        databaseUrl: database.url,
        sandboxUrl: sandbox.url,
        apiKey,
        // The status poll runs at the direct path's cadence. The recovery worker and the transactions tracker
        // keep the replica env's intervals: they are crash recovery, not on an order's path (it is handed to
        // the driver in process and tracked there), and polling them every 10 ms would only add load.
        extra: {
          SYNC_ENABLED: 'false',
          SYNC_ON_STARTUP: 'false',
          CHECKOUT_TRACK_POLL_MS: String(POLL_MS),
          // The per-buyer limits at their defaults (the replica env raises them for the chaos run's few
          // buyers): every bench buyer buys one ticket.
          CHECKOUT_MAX_OPEN_ORDERS_PER_BUYER: String(defaults.CHECKOUT_MAX_OPEN_ORDERS_PER_BUYER),
          CHECKOUT_MAX_PURCHASES_PER_BUYER_PER_EVENT: String(
            defaults.CHECKOUT_MAX_PURCHASES_PER_BUYER_PER_EVENT,
          ),
          // BENCH_CHECKOUT_CPU_PROF=<dir>: a V8 CPU profile of the replica, written when it stops.
          ...(process.env.BENCH_CHECKOUT_CPU_PROF
            ? { BENCH_CPU_PROF_DIR: process.env.BENCH_CHECKOUT_CPU_PROF }
            : {}),
          // BENCH_CHECKOUT_OTLP=<url>: the replica traced (every span) to that OTLP/HTTP receiver, to see where an
          // order's time goes (tracing costs time itself: never for the figure).
          ...(process.env.BENCH_CHECKOUT_OTLP
            ? { OTEL_EXPORTER_OTLP_ENDPOINT: process.env.BENCH_CHECKOUT_OTLP, OTEL_BSP_SCHEDULE_DELAY: '500' }
            : {}),
        },
      }),
    );
    await replica.start();
    await db.connect();
    // One webhook endpoint registered (issue 24's target holds with it): every order's events fan out to a
    // loopback receiver that answers 204, so the outbox triggers and the deliveries run alongside the orders.
    // BENCH_CHECKOUT_WEBHOOKS=0: no endpoint (the figure without the deliveries, to tell their cost apart).
    const withWebhook = process.env.BENCH_CHECKOUT_WEBHOOKS !== '0';
    let delivered = 0;
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        delivered++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver?.listen(0, '127.0.0.1', resolve));
    const receiverPort = (receiver.address() as { port: number }).port;
    if (withWebhook) {
      const endpoint = await fetch(`${replica.url}/v1/webhooks/endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          url: `http://127.0.0.1:${receiverPort}/hooks`,
          description: 'bench receiver',
        }),
      });
      if (endpoint.status !== 201) throw new Error(`webhook endpoint not registered: ${endpoint.status}`);
    }
    const protocol = await upstream<Record<string, string>>(`${sandbox.url}/indexer/protocol-config`);
    const total = orders * 2 + 10;
    // One buyer per ticket, each buying once, as real buyers do under the default per-buyer limits.
    const buyers: { subject: string; address: string }[] = [];
    for (let t = 1; t <= total; t++) {
      await sandbox.seedListing(EVENT_ID, BigInt(t), `bench-seller-${t % 7}`, 1_000_000n + BigInt(t));
      const subject = `bench-buyer-${t}`;
      buyers[t] = { subject, address: await sandbox.userAddress(subject) };
    }

    const service: number[] = [];
    const direct: number[] = [];
    const overhead: number[] = [];
    const phases: Record<string, number[]> = {};
    const toCreated: number[] = [];
    // The order's first submission answer as the ledger recorded it, from the POST (service) / from the start
    // (direct): the head, before any status poll. What follows it is polling until the landing.
    const headService: number[] = [];
    const headDirect: number[] = [];
    const headOverhead: number[] = [];
    let ticket = 0;
    const placeOrder = async (measure: boolean): Promise<void> => {
      ticket++;
      const t0 = performance.timeOrigin + performance.now();
      const res = await fetch(`${replica.url}/v1/orders`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'idempotency-key': `bench-${ticket}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          buyer_subject: buyers[ticket].subject,
          buyer_address: buyers[ticket].address,
          event_id: EVENT_ID.toString(),
          ticket_id: String(ticket),
          expected_price_minor: String(1_000_000 + ticket),
        }),
      });
      const order = (await res.json()) as { id: string };
      if (res.status !== 202) throw new Error(`POST /v1/orders: ${res.status}`);
      // The service's time is its committed final_at, so this check need not be frequent: every FINAL_CHECK_MS
      // keeps the bench's own queries from loading the machine while the service works. It waits until the
      // order is done (mirror refreshed) and its transaction's after-final handler has run, so that none of
      // the order's follow-up work overlaps the paired direct purchase. The first check waits out the landing
      // delay (no order can be final sooner): a query of the bench's own right after the 202 competed with the
      // service's first steps for the two cores (the direct path has no such neighbour), and when it reads
      // final_at does not change the value it reads.
      await sleep(LANDING_DELAY_MS);
      for (let i = 0; ; i++) {
        const row = await db.query<{
          state: string;
          final_ms: string | null;
          created_ms: string;
          answered_ms: string | null;
          settled: boolean;
        }>(
          `SELECT o.state, extract(epoch FROM o.final_at) * 1000 AS final_ms,
             extract(epoch FROM o.created_at) * 1000 AS created_ms,
             (SELECT extract(epoch FROM min(e.at)) * 1000 FROM ledger_transaction_events e
               WHERE e.transaction_id = o.transaction_record_id AND e.type = 'status') AS answered_ms,
             (o.recovery_point = 'done' AND t.on_final_done_at IS NOT NULL) AS settled
           FROM orders o LEFT JOIN ledger_transactions t ON t.id = o.transaction_record_id WHERE o.id = $1`,
          [order.id],
        );
        const {
          state,
          final_ms: finalMs,
          created_ms: createdMs,
          answered_ms: answeredMs,
          settled,
        } = row.rows[0];
        if (finalMs !== null && state !== 'confirmed') throw new Error(`bench order ended ${state}`);
        if (finalMs !== null && settled) {
          if (measure) {
            service.push(Number(finalMs) - t0);
            toCreated.push(Number(createdMs) - t0);
            if (answeredMs === null) throw new Error('bench order final without a recorded first answer');
            headService.push(Number(answeredMs) - t0);
          }
          return;
        }
        if (i > 1000) throw new Error('bench order not final in time');
        await sleep(FINAL_CHECK_MS);
      }
    };
    // Warm-up (JIT, pools, protocol config cache) on both paths.
    for (let i = 0; i < 5; i++) {
      await placeOrder(false);
      ticket++;
      await directPurchase(sandbox.url, protocol, buyers[ticket], String(ticket), {});
    }
    // What an order leaves on disk (DEPLOY.md sizing): every table an order writes, read after the warm-up (so
    // no table's first pages count) and after the last order is settled. Heap includes row versions that
    // autovacuum has not yet reclaimed (each order's rows are updated as it moves).
    const sizesBefore = await tableSizes(db, ORDER_TABLES);
    for (let i = 0; i < orders; i++) {
      await placeOrder(true);
      ticket++;
      const d = await directPurchase(sandbox.url, protocol, buyers[ticket], String(ticket), phases);
      direct.push(d.total);
      overhead.push(service[service.length - 1] - d.total);
      headDirect.push(d.firstAnswer);
      headOverhead.push(headService[headService.length - 1] - d.firstAnswer);
    }
    const p50 = percentile(overhead, 50);
    // The tail is the polls after the first answer until the landing is seen: both sides poll every POLL_MS, each
    // at its own phase against the landing, so the paired tail spreads over about ±POLL_MS by itself.
    const tailService = service.map((v, i) => v - headService[i]);
    const tailDirect = direct.map((v, i) => v - headDirect[i]);
    const tailOverhead = tailService.map((v, i) => v - tailDirect[i]);
    await printPgStats(db);
    const onDisk = perMillion(sizesBefore, await tableSizes(db, ORDER_TABLES), orders);
    // Where the service's time goes: median time from each committed step to the next (order_steps audit).
    const steps = await db.query<{ step: string; n: string; p50: string }>(
      `SELECT step, count(*) AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS p50 FROM (
         SELECT step, id, extract(epoch FROM at - lag(at) OVER (PARTITION BY order_id ORDER BY id)) * 1000 AS d
         FROM order_steps) s
       WHERE d IS NOT NULL GROUP BY step ORDER BY min(id)`,
    );
    // The critical path against the ledger's own events (transactions module), medians: order created → the
    // ledger's row (the live read runs alongside the insert; the row is written alongside the signing call) →
    // signed (the rest of the sign call; the first submission leaves as its answer arrives) → first answer
    // recorded → the order's one commit of revalidation, signature and first answer.
    const ledger = await db.query<Record<string, string>>(
      `WITH s AS (SELECT order_id, min(at) FILTER (WHERE step = 'created') AS created,
                    min(at) FILTER (WHERE step = 'submitted') AS submitted
                  FROM order_steps GROUP BY order_id),
         e AS (SELECT transaction_id, min(at) FILTER (WHERE type = 'created') AS created,
                 min(at) FILTER (WHERE type = 'signed') AS signed,
                 min(at) FILTER (WHERE type = 'status') AS answered
               FROM ledger_transaction_events GROUP BY transaction_id),
         d AS (SELECT extract(epoch FROM e.created - s.created) * 1000 AS a,
                 extract(epoch FROM e.signed - e.created) * 1000 AS b,
                 extract(epoch FROM e.answered - e.signed) * 1000 AS c,
                 extract(epoch FROM s.submitted - e.answered) * 1000 AS d
               FROM orders o JOIN s ON s.order_id = o.id JOIN e ON e.transaction_id = o.transaction_record_id)
       SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a) AS a, percentile_cont(0.5) WITHIN GROUP (ORDER BY b) AS b,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY c) AS c, percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS d
       FROM d`,
    );
    const l = ledger.rows[0] ?? {};
    const ledgerBreakdown = `order created → ledger row ${f1(l.a)} → signature recorded (rest of the sign call, which began with the row; recorded alongside the first submission) ${f1(l.b)} → first answer recorded ${f1(l.c)} → order's commit ${f1(l.d)}`;
    const breakdown = [
      `created ${percentile(toCreated, 50).toFixed(1)} (from POST sent)`,
      ...steps.rows.map((r) => `${r.step} ${Number(r.p50).toFixed(1)}`),
    ].join(', ');
    return {
      name: `checkout: service overhead per order (${orders} sequential orders, landing ${LANDING_DELAY_MS} ms, polls ${POLL_MS} ms, ${withWebhook ? 'one webhook endpoint' : 'no webhook endpoint'})`,
      rows: [
        [
          'service: POST → final_at',
          `p50 ${ms(percentile(service, 50))}, p99 ${ms(percentile(service, 99))}`,
        ],
        [
          'sandbox direct (same path)',
          `p50 ${ms(percentile(direct, 50))}, p99 ${ms(percentile(direct, 99))}`,
        ],
        ['overhead (paired)', `p50 ${ms(p50)}, p99 ${ms(percentile(overhead, 99))}`],
        [
          'head: to the first submission answer',
          `service p50 ${ms(percentile(headService, 50))}, direct p50 ${ms(percentile(headDirect, 50))}, paired p50 ${ms(percentile(headOverhead, 50))}, p99 ${ms(percentile(headOverhead, 99))}`,
        ],
        [
          'tail: first answer → final (polls)',
          `service p50 ${ms(percentile(tailService, 50))}, direct p50 ${ms(percentile(tailDirect, 50))}, paired p50 ${ms(percentile(tailOverhead, 50))}, p99 ${ms(percentile(tailOverhead, 99))}`,
        ],
        ['median ms from the previous step to', breakdown],
        ['ledger (median ms)', ledgerBreakdown],
        [
          'webhooks',
          withWebhook
            ? `one endpoint registered: ${delivered} deliveries received during the run`
            : 'no endpoint (BENCH_CHECKOUT_WEBHOOKS=0)',
        ],
        ['on disk per million orders', onDisk],
        [
          'direct: median ms per phase',
          Object.entries(phases)
            .map(([name, values]) => `${name} ${percentile(values, 50).toFixed(1)}`)
            .join(', '),
        ],
      ],
      targets: [{ what: `overhead p50 ${ms(p50)} < 5 ms`, ok: p50 < 5 }],
    };
  } finally {
    receiver?.close();
    await db.end().catch(() => undefined);
    await group.stopAll();
    await database.close();
  }
}
