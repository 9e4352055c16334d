import { generateApiKey } from '../src/auth/api-key';
import { CheckoutConfig } from '../src/config/checkout.config';
import { TransactionsConfig } from '../src/config/transactions.config';
import { UpstreamConfig } from '../src/config/upstream.config';
import { provisionDatabase, type ChaosDatabase } from './chaos/database';
import { percentile, seededRandom } from './chaos/orders-client';
import { ProcessGroup, sleep, waitFor } from './chaos/processes';
import { SANDBOX_API_KEY, SANDBOX_READONLY_API_KEY, SandboxProcess } from './chaos/sandbox-process';
import { replicaEnv, TEST_DEPLOYMENT_ENV } from './chaos/service-env';
import { ServiceReplica } from './chaos/service-replica';
import { FreshMarket } from './freshness/market';
import { Reader, upstreamListings } from './freshness/reader';
import {
  changeLatencies,
  changesByEvent,
  diagnoseSample,
  latencyPercentile,
  perSecondRates,
  scoreSample,
  type BrowseSample,
  type Latencies,
} from './freshness/score';
import { eventWalks, relativeTime, walkGaps, walksAround, type EventWalk } from './freshness/walks';
import { eventReads, wireFigures, WireProxy } from './freshness/wire';
import type { BenchReport } from './report';

const BUSY_EVENT_BASE = 9_300_000n;
/** The reader keeps browsing this long after the last change, so every change has browses after it. */
const TAIL_MS = 8_000;
const METRICS_EVERY_MS = 1_000;
const COLD_EVENTS = 5;
const MARKET_LANDING_DELAY_MS = 250;
/** The market ticks this much faster than the scenario's rate (attempts; what counts is what really happened). */
const TICK_OVERSHOOT = 1.05;

interface Scenario {
  name: 'small' | 'busy' | 'large';
  /** Changes a second that really happen. */
  rate: number;
  busyEvents: number;
  /** Generated listings upstream besides the busy events (the cold tail). */
  coldListings: number;
}

const SCENARIOS: Record<Scenario['name'], Scenario> = {
  small: { name: 'small', rate: 3, busyEvents: 5, coldListings: 0 },
  busy: { name: 'busy', rate: 20, busyEvents: 50, coldListings: 0 },
  large: { name: 'large', rate: 20, busyEvents: 50, coldListings: 1_000_000 },
};

const pct = (v: number): string => (Number.isFinite(v) ? `${(v * 100).toFixed(2)} %` : 'n/a');
const secs = (v: number): string => (Number.isFinite(v) ? `${(v / 1000).toFixed(2)} s` : 'never');

/** `BENCH_FRESHNESS_SCENARIO`: small | busy | large | all, or a comma-separated list (default small,busy). */
export function freshnessScenarios(value: string | undefined): Scenario[] {
  const names = !value ? ['small', 'busy'] : value === 'all' ? Object.keys(SCENARIOS) : value.split(',');
  return names.map((name) => {
    const scenario = SCENARIOS[name.trim() as Scenario['name']];
    if (!scenario)
      throw new Error(`BENCH_FRESHNESS_SCENARIO: unknown scenario ${name}; known: small, busy, large, all`);
    return scenario;
  });
}

/** The sum of `upstream_requests_total` on A's /metrics, attempts that never left the process excluded. */
async function upstreamRequests(serviceUrl: string, apiKey: string): Promise<number> {
  // /metrics is admin-only outside the local demo (METRICS_PUBLIC unset): the reader's key is the bootstrap admin.
  const res = await fetch(`${serviceUrl}/metrics`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(5_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('upstream_requests_total{')) continue;
    if (/status="(circuit_open|overloaded)"/.test(line)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * A's own account of its hot walks and upstream requests (its /metrics, read at the end): walks by status,
 * skipped walks by reason, upstream requests by status — what tells a service that did not walk from a market
 * the machine could not carry.
 */
async function serviceCounters(serviceUrl: string, apiKey: string): Promise<string> {
  const res = await fetch(`${serviceUrl}/metrics`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(5_000),
  });
  const text = await res.text();
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m =
      /^(catalog_sync_hot_walks_total|catalog_sync_hot_walks_skipped_total|upstream_requests_total)\{.*?(status|reason)="([^"]*)".*\} (\S+)$/.exec(
        line,
      );
    if (!m) continue;
    const name = `${m[1].replace('catalog_sync_', '').replace('_total', '')}{${m[3]}}`;
    sums.set(name, (sums.get(name) ?? 0) + Number(m[4]));
  }
  // Mean duration of A's completed per-event walks (hot, fresh, sampler), from the pass-duration histogram.
  const walk = (suffix: string): number => {
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith(`catalog_sync_pass_duration_seconds_${suffix}{`) &&
          l.includes('resource="event_listings"') &&
          l.includes('status="completed"'),
      );
    return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const walkMean = walk('sum') / walk('count');
  // Mean duration of A's upstream requests (every operation): how much of a walk is the upstream's answer.
  const histogram = (suffix: string): number =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`upstream_request_duration_seconds_${suffix}{`))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  const upstreamMean = histogram('sum') / histogram('count');
  return [
    ...[...sums].map(([k, v]) => `${k} ${v}`),
    `per-event walk mean ${Number.isFinite(walkMean) ? `${(walkMean * 1000).toFixed(0)} ms` : 'n/a'}`,
    `upstream request mean ${Number.isFinite(upstreamMean) ? `${(upstreamMean * 1000).toFixed(0)} ms` : 'n/a'}`,
  ].join(', ');
}

/** Waits (bounded) until A serves every one of `events` from a completed listings pass. */
async function waitServed(
  serviceUrl: string,
  apiKey: string,
  events: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const pending = new Set(events);
  await waitFor(
    `service A serving all ${events.length} events`,
    async () => {
      for (const eventId of pending) {
        const res = await fetch(`${serviceUrl}/v1/events/${eventId}/listings?limit=1`, {
          headers: { authorization: `Bearer ${apiKey}` },
          signal: AbortSignal.timeout(10_000),
        }).catch(() => null);
        const body =
          res?.status === 200
            ? ((await res.json()) as { items: unknown[]; data_as_of: string | null })
            : null;
        if (body && body.items.length > 0 && body.data_as_of !== null) pending.delete(eventId);
      }
      return pending.size === 0;
    },
    timeoutMs,
    1_000,
  );
}

/** Up to COLD_EVENTS generated events with 20–1,000 listings upstream (a browse of each stays a few pages). */
async function pickColdEvents(sandbox: SandboxProcess, busy: readonly string[]): Promise<string[]> {
  const res = await fetch(`${sandbox.url}/indexer/events/upcoming?limit=200`, {
    headers: { 'x-api-key': SANDBOX_API_KEY },
    signal: AbortSignal.timeout(30_000),
  });
  const page = (await res.json()) as { items: { event_id: string | null }[] };
  const cold: string[] = [];
  for (const { event_id: eventId } of page.items) {
    if (eventId === null || busy.includes(eventId)) continue;
    const size = (await upstreamListings(sandbox.url, eventId)).size;
    if (size >= 20 && size <= 1_000) cold.push(eventId);
    if (cold.length === COLD_EVENTS) break;
  }
  return cold;
}

/**
 * The verdict: a scenario whose market made fewer real changes a second than its rate was not measured — every
 * target then FAILs as "not measured" (a pass at a lower rate would flatter the service).
 */
export function judged(
  realRate: number,
  rate: number,
  targets: BenchReport['targets'],
): BenchReport['targets'] {
  const measured = realRate >= rate;
  return [
    {
      what: `changes really made ${realRate.toFixed(2)}/s ≥ ${rate}/s${measured ? '' : ': NOT MEASURED at this rate'}`,
      ok: measured,
    },
    ...targets.map((t) =>
      measured ? t : { what: `not measured (change rate too low): ${t.what}`, ok: false },
    ),
  ];
}

interface Accuracy {
  samples: number;
  mean: number;
  worst: number;
  missingMean: number;
  missingWorst: number;
}

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

function accuracyOf(samples: readonly BrowseSample[], byEvent: ReturnType<typeof changesByEvent>): Accuracy {
  const accuracies: number[] = [];
  const missing: number[] = [];
  for (const sample of samples) {
    const score = scoreSample(sample, byEvent.get(sample.eventId) ?? []);
    if (score.served > 0) accuracies.push(score.accurate / score.served);
    if (score.expected > 0) missing.push(score.missing / score.expected);
  }
  return {
    samples: accuracies.length,
    mean: accuracies.length > 0 ? mean(accuracies) : Number.NaN,
    worst: accuracies.length > 0 ? Math.min(...accuracies) : Number.NaN,
    missingMean: missing.length > 0 ? mean(missing) : Number.NaN,
    missingWorst: missing.length > 0 ? Math.max(...missing) : Number.NaN,
  };
}

/** When A read the event upstream (its walks' page reads at the wire) around one browse, relative to its start. */
function readsAround(sample: BrowseSample, reads: readonly number[] | undefined): string {
  const at = (t: number): string => relativeTime(t, sample.startMs);
  const before = (reads ?? []).filter((t) => t < sample.startMs).slice(-3);
  const during = (reads ?? []).filter((t) => t >= sample.startMs && t <= sample.endMs);
  return `A read the event upstream at ${before.length > 0 ? before.map(at).join(', ') : 'never before'}${
    during.length > 0 ? ` and during the browse at ${during.map(at).join(', ')}` : ''
  }`;
}

/**
 * The per-sample view behind the worst figure: the age of the served data (browse start − its data_as_of) over
 * all samples, and the `count` worst samples with their wrong listings' removal times before the browse began and
 * A's reads of the event at the wire around it (was a walk late, in flight, or did it miss the change?).
 */
function sampleRows(
  samples: readonly BrowseSample[],
  byEvent: ReturnType<typeof changesByEvent>,
  reads: ReadonlyMap<string, number[]>,
  walks: ReadonlyMap<string, EventWalk[]>,
  t0: number,
  count: number,
): [string, string][] {
  const scored = samples.map((sample) => {
    const changes = byEvent.get(sample.eventId) ?? [];
    const score = scoreSample(sample, changes);
    return { sample, score, diagnosis: diagnoseSample(sample, changes) };
  });
  const ages = scored.map((s) => s.diagnosis.dataAgeMs).filter((a) => Number.isFinite(a));
  const worst = scored
    .filter((s) => s.score.served > 0)
    .sort((x, y) => x.score.accurate / x.score.served - y.score.accurate / y.score.served)
    .slice(0, count);
  return [
    [
      'served data age at browse start',
      `p50 ${secs(percentile(ages, 50))}, p90 ${secs(percentile(ages, 90))}, p99 ${secs(percentile(ages, 99))}, max ${secs(
        ages.length > 0 ? Math.max(...ages) : Number.NaN,
      )} (browse start − the pages' data_as_of)`,
    ],
    ...worst.map(({ sample, score, diagnosis }, i): [string, string] => [
      `worst sample ${i + 1}`,
      `event ${sample.eventId} at +${((sample.startMs - t0) / 1000).toFixed(1)} s, ${pct(score.accurate / score.served)} (${
        score.served - score.accurate
      } wrong of ${score.served}), browse ${sample.endMs - sample.startMs} ms, data age ${secs(diagnosis.dataAgeMs)}; wrong ones removed ${diagnosis.wrongRemovedBeforeMs
        .map((ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : 'never (not logged)'))
        .join(', ')} before the browse; ${readsAround(sample, reads.get(sample.eventId))}; ${walksAround(
        walks.get(sample.eventId),
        sample.startMs,
        sample.endMs,
      )}`,
    ]),
  ];
}

/** How evenly A walked the busy events during the changes (gaps between one event's walk starts). */
function walkGapsRow(
  walks: ReadonlyMap<string, EventWalk[]>,
  events: readonly string[],
  fromMs: number,
  toMs: number,
): string {
  const { gaps, perEventMean } = walkGaps(walks, events, fromMs, toMs);
  if (gaps.length === 0) return 'no walks read';
  const least = perEventMean[perEventMean.length - 1];
  const most = perEventMean[0];
  return `between one event's walk starts p50 ${secs(percentile(gaps, 50))}, p90 ${secs(percentile(gaps, 90))}, p99 ${secs(
    percentile(gaps, 99),
  )}, max ${secs(Math.max(...gaps))}; per event mean from ${secs(most.meanMs)} (event ${most.eventId}, ${most.walks} walks) to ${secs(
    least.meanMs,
  )} (event ${least.eventId}, ${least.walks} walks)`;
}

const latencyRow = (l: Latencies): string => {
  const lower = { values: l.lower, lower: [], never: l.never };
  return `p50 ${secs(latencyPercentile(l, 50))}, p90 ${secs(latencyPercentile(l, 90))} (lower bounds: p50 ${secs(
    latencyPercentile(lower, 50),
  )}, p90 ${secs(latencyPercentile(lower, 90))}), max shown ${secs(
    l.values.length > 0 ? Math.max(...l.values) : Number.NaN,
  )}; never shown ${l.never} of ${l.values.length + l.never}`;
};

/**
 * `BENCH_FRESHNESS_A_ENV` (`NAME=value,NAME=value`): settings of A for an experiment, printed in the report; a run
 * with any is not a run of the default configuration the targets are about.
 */
export function serviceOverrides(value: string | undefined): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const pair of (value ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0 || !/^[A-Z][A-Z0-9_]*$/.test(pair.slice(0, at).trim()))
      throw new Error(`BENCH_FRESHNESS_A_ENV: expected NAME=value[,NAME=value], got ${pair}`);
    overrides[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return overrides;
}

async function runScenario(
  scenario: Scenario,
  seconds: number,
  loops: number,
  overrides: Record<string, string>,
): Promise<BenchReport> {
  const group = new ProcessGroup();
  const databases: ChaosDatabase[] = [];
  const budget = new UpstreamConfig().UPSTREAM_RATE_LIMIT_RPS;
  try {
    // A and B each on a database of its own, in one cluster (the run's throwaway cluster, or DATABASE_URL's).
    const dbA = await provisionDatabase(process.env.DATABASE_URL || undefined);
    databases.push(dbA);
    const clusterUrl = new URL(dbA.url);
    clusterUrl.pathname = '/postgres';
    const dbB = await provisionDatabase(process.env.DATABASE_URL || clusterUrl.toString());
    databases.unshift(dbB);

    const sandbox = await SandboxProcess.start(group, {
      seed: `fresh-${scenario.name}`,
      events: scenario.coldListings > 0 ? 5_000 : 0,
      listings: scenario.coldListings,
      // The market's own purchases and cancels land this long after submission (not what is measured): short,
      // so that fewer are in flight and B polls less for each.
      landingDelayMs: MARKET_LANDING_DELAY_MS,
      startTimeoutMs: scenario.coldListings > 0 ? 600_000 : 30_000,
    });
    // A reaches the sandbox through a counting proxy: its upstream budget is judged at the wire, by arrival.
    const wire = await WireProxy.start(group, sandbox.url);
    const aKey = generateApiKey();
    const bKey = generateApiKey();
    // A: the service under test at its default configuration, apart from what a bench must set — its database,
    // the sandbox's URL and (read-only) key, a bootstrap key for the reader, warn-level logs, no drain delay on
    // stop, and the per-client read limit out of the way (the one reader key stands for many browsers).
    const a = await ServiceReplica.create('fresh-A', group, {
      // A deployment (UPSTREAM_BASE_URL set) needs its secrets: the test values every bench process uses.
      ...TEST_DEPLOYMENT_ENV,
      LOG_LEVEL: 'warn',
      DATABASE_URL: dbA.url,
      UPSTREAM_BASE_URL: wire.url,
      UPSTREAM_API_KEY: SANDBOX_READONLY_API_KEY,
      BFF_BOOTSTRAP_API_KEY: aKey,
      RATE_LIMIT_CATALOG_READ: '100000',
      SHUTDOWN_DRAIN_DELAY_MS: '0',
      ...overrides,
    });
    // B: the rest of the market, the chaos replica's settings (short polls, buyer limits raised), no sync, but the
    // default upstream and revalidation timeouts: on a loaded machine the chaos run's short ones made orders retry.
    const upstreamDefaults = new UpstreamConfig();
    const checkoutDefaults = new CheckoutConfig();
    const b = await ServiceReplica.create(
      'fresh-B',
      group,
      replicaEnv({
        databaseUrl: dbB.url,
        sandboxUrl: sandbox.url,
        apiKey: bKey,
        extra: {
          SYNC_ENABLED: 'false',
          SYNC_ON_STARTUP: 'false',
          // Up to 100 changes in flight: orders waited on the default pool of 10 connections.
          DB_POOL_SIZE: '30',
          UPSTREAM_READ_TIMEOUT_MS: String(upstreamDefaults.UPSTREAM_READ_TIMEOUT_MS),
          UPSTREAM_SIGN_TIMEOUT_MS: String(upstreamDefaults.UPSTREAM_SIGN_TIMEOUT_MS),
          UPSTREAM_SUBMIT_TIMEOUT_MS: String(upstreamDefaults.UPSTREAM_SUBMIT_TIMEOUT_MS),
          UPSTREAM_DEADLINE_MS: String(upstreamDefaults.UPSTREAM_DEADLINE_MS),
          CHECKOUT_REVALIDATE_TIMEOUT_MS: String(checkoutDefaults.CHECKOUT_REVALIDATE_TIMEOUT_MS),
          // And the default polls: the chaos run's 100–200 ms polls of every order and transaction in flight were
          // most of the sandbox's requests, on a sandbox A's walks and the truth reads share (session 15).
          CHECKOUT_TRACK_POLL_MS: String(checkoutDefaults.CHECKOUT_TRACK_POLL_MS),
          CHECKOUT_WORKER_INTERVAL_MS: String(checkoutDefaults.CHECKOUT_WORKER_INTERVAL_MS),
          TX_TRACKER_INTERVAL_MS: String(new TransactionsConfig().TX_TRACKER_INTERVAL_MS),
        },
      }),
    );
    const market = new FreshMarket(
      sandbox,
      b,
      bKey,
      seededRandom(`fresh-${scenario.name}`),
      scenario.name,
      MARKET_LANDING_DELAY_MS,
    );
    const busyEvents = await market.seed(BUSY_EVENT_BASE, scenario.busyEvents);
    const seededListings = market.listingCount();
    const coldEvents = scenario.coldListings > 0 ? await pickColdEvents(sandbox, busyEvents) : [];

    const syncStart = Date.now();
    await Promise.all([a.start({}, 120_000), b.start({}, 120_000)]);
    await waitServed(
      a.url,
      aKey,
      [...busyEvents, ...coldEvents],
      scenario.coldListings > 0 ? 1_200_000 : 120_000,
    );
    const syncMs = Date.now() - syncStart;

    const readings: { atMs: number; count: number }[] = [];
    const sampling = new AbortController();
    const sampler = (async () => {
      for (let i = 0; !sampling.signal.aborted && i < 100_000; i++) {
        const count = await upstreamRequests(a.url, aKey).catch(() => null);
        if (count !== null) readings.push({ atMs: Date.now(), count });
        await sleep(METRICS_EVERY_MS);
      }
    })();

    const reader = new Reader({
      serviceUrl: a.url,
      apiKey: aKey,
      sandboxUrl: sandbox.url,
      busyEvents,
      coldEvents,
      coldEvery: 10,
      loops,
      thinkMs: 20,
    });
    const t0 = Date.now();
    reader.start(seconds * 1000 + 120_000 + TAIL_MS);
    // Ticks a little above the rate, so that the few changes that fail (a purchase racing a cancel of the same
    // listing, a landing past its blockhash on a loaded machine) do not take the real rate below the target.
    await market.run(scenario.rate * TICK_OVERSHOOT, seconds, Math.max(16, Math.ceil(scenario.rate * 5)));
    const changesEnd = Date.now();
    await sleep(TAIL_MS);
    await reader.stop();
    sampling.abort();
    await sampler;

    const counters = await serviceCounters(a.url, aKey).catch((e: unknown) => `not read: ${String(e)}`);
    const changes = await market.changes();
    const byEvent = changesByEvent(changes);
    const during = reader.samples.filter((s) => s.startMs >= t0 && s.startMs <= changesEnd);
    const busy = accuracyOf(
      during.filter((s) => !s.cold),
      byEvent,
    );
    const cold = accuracyOf(
      during.filter((s) => s.cold),
      byEvent,
    );
    const samplesByEvent = new Map<string, BrowseSample[]>();
    for (const sample of [...reader.samples].sort((x, y) => x.startMs - y.startMs)) {
      const list = samplesByEvent.get(sample.eventId) ?? [];
      list.push(sample);
      samplesByEvent.set(sample.eventId, list);
    }
    const removal = changeLatencies(changes, samplesByEvent, 'removed');
    const added = changeLatencies(changes, samplesByEvent, 'added');
    const revisits: number[] = [];
    for (const eventId of busyEvents) {
      const list = (samplesByEvent.get(eventId) ?? []).filter(
        (s) => s.startMs >= t0 && s.startMs <= changesEnd,
      );
      for (let i = 1; i < list.length; i++) revisits.push(list[i].startMs - list[i - 1].startMs);
    }
    const rates = perSecondRates(
      readings.filter((r) => r.atMs >= t0 && r.atMs <= changesEnd + METRICS_EVERY_MS),
    );
    const maxRate = rates.length > 0 ? Math.max(...rates) : Number.NaN;
    const arrivals = await wire.arrivals();
    const atWire = wireFigures(arrivals, t0, changesEnd);
    const walks = await eventWalks(dbA.url, t0 - 60_000).catch(() => new Map<string, EventWalk[]>());
    const meanRate =
      readings.length > 1
        ? (readings[readings.length - 1].count - readings[0].count) /
          ((readings[readings.length - 1].atMs - readings[0].atMs) / 1000)
        : Number.NaN;

    const { done, failed, skipped, reasons, route } = market.tally;
    // What really happened: the ledger's confirmed purchases and cancels (a reprice counts once, as its cancel)
    // and the admin's new listings.
    const confirmed = await market.confirmedRemovals();
    const made = confirmed.buy + confirmed.cancel + done.add;
    const pacedSeconds = (changesEnd - t0) / 1000;
    const realRate = made / seconds;
    const p90Removal = latencyPercentile(removal, 90);
    const p90Added = latencyPercentile(added, 90);
    const rows: [string, string][] = [
      [
        'upstream',
        `${scenario.busyEvents} busy events, ${seededListings} listings on them at the start${
          scenario.coldListings > 0
            ? `; ${scenario.coldListings.toLocaleString('en')} generated listings (cold tail), ${coldEvents.length} cold events browsed`
            : ''
        }`,
      ],
      ['A: start to serving every event', secs(syncMs)],
      [
        'A configuration',
        Object.keys(overrides).length === 0
          ? 'defaults'
          : `NOT the defaults: ${Object.entries(overrides)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')} (BENCH_FRESHNESS_A_ENV)`,
      ],
      [
        'changes really made',
        `${made} in ${seconds} s = ${realRate.toFixed(2)}/s (target rate ${scenario.rate}/s): ledger-confirmed purchases ${confirmed.buy} and cancels ${confirmed.cancel} (of which reprices relisted ${done.reprice}), new listings ${done.add}; last one ${pacedSeconds.toFixed(1)} s after the first tick`,
      ],
      [
        'changes: route, failed, skipped',
        `purchases and cancels started through B ${route.b}, through the direct integrator ${route.direct}; failed buy ${failed.buy}, cancel ${failed.cancel}, reprice ${failed.reprice}, new ${failed.add}; ticks skipped at the in-flight bound ${skipped}${
          reasons.length > 0 ? `; e.g. ${reasons.join(' | ')}` : ''
        }`,
      ],
      [
        'reader',
        `${loops} loops, ${during.length} browses during the changes (${(during.length / pacedSeconds).toFixed(1)}/s), ${reader.tally.browses} in all, ${reader.tally.eventPages} events-list pages, ${reader.tally.errors} errors${
          reader.tally.reasons.length > 0 ? ` (${reader.tally.reasons.slice(0, 2).join(' | ')})` : ''
        }; same event revisited every ${secs(percentile(revisits, 50))} (p50)`,
      ],
      [
        'served accuracy (busy events)',
        `mean ${pct(busy.mean)}, worst sample ${pct(busy.worst)} over ${busy.samples} samples`,
      ],
      [
        'missing (busy events)',
        `mean ${pct(busy.missingMean)}, worst sample ${pct(busy.missingWorst)} of what was for sale`,
      ],
      ...sampleRows(
        during.filter((s) => !s.cold),
        byEvent,
        eventReads(arrivals),
        walks,
        t0,
        3,
      ),
      ['A walk gaps (busy events)', walkGapsRow(walks, busyEvents, t0, changesEnd)],
      ['removal → not served', latencyRow(removal)],
      ['new listing → served', latencyRow(added)],
      [
        'A upstream requests/s at the wire',
        `busiest 1-s window ${atWire.busiest.count} (sliding, by arrival at the counting proxy; at +${(
          (atWire.busiest.at - t0) /
          1000
        ).toFixed(
          1,
        )} s), ${atWire.busiestDuring} during the changes, busiest clock second ${atWire.busiestAligned}; mean ${atWire.meanDuring.toFixed(
          1,
        )}/s during the changes; ${atWire.total} requests from A's start to the end; budget UPSTREAM_RATE_LIMIT_RPS ${budget}`,
      ],
      [
        "the sandbox's answers to A (at the proxy)",
        `first byte after p50 ${atWire.answer.p50} ms, p99 ${atWire.answer.p99} ms, max ${atWire.answer.max} ms; ${atWire.answer.overOneSecond} over 1 s, ${atWire.answer.unanswered} never answered`,
      ],
      [
        'A upstream completions/s (not the wire)',
        `max ${maxRate.toFixed(1)}, mean ${meanRate.toFixed(1)}: increase of A's upstream_requests_total (counted when a request completes) between /metrics reads about 1 s apart; completions bunched at a read's edge read high, so no target on it`,
      ],
    ];
    rows.push(['A counters at the end', counters]);
    if (scenario.coldListings > 0)
      rows.push([
        'cold events (no changes)',
        `accuracy mean ${pct(cold.mean)}, worst ${pct(cold.worst)}, missing mean ${pct(cold.missingMean)} over ${cold.samples} samples`,
      ]);
    return {
      name: `freshness: ${scenario.name} — ${scenario.rate} changes/s over ${scenario.busyEvents} busy events, ${seconds} s`,
      rows,
      targets: judged(realRate, scenario.rate, [
        { what: `served accuracy mean ${pct(busy.mean)} ≥ 99.5 %`, ok: busy.mean >= 0.995 },
        { what: `served accuracy worst sample ${pct(busy.worst)} ≥ 98 %`, ok: busy.worst >= 0.98 },
        { what: `removal → not served p90 ${secs(p90Removal)} ≤ 5 s`, ok: p90Removal <= 5_000 },
        { what: `new listing → served p90 ${secs(p90Added)} ≤ 5 s`, ok: p90Added <= 5_000 },
        {
          what: `A's upstream requests at the wire, busiest 1-s window ${atWire.busiest.count} ≤ budget ${budget}`,
          ok: atWire.busiest.count <= budget,
        },
      ]),
    };
  } finally {
    await group.stopAll();
    for (const database of databases) await database.close().catch(() => undefined);
  }
}

/**
 * `npm run bench -- freshness` (issue 30): how closely what the read API serves on busy events follows the
 * upstream while the rest of the market changes it. One report per scenario (docs/BENCHMARKS.md › Freshness).
 */
export async function benchFreshness(): Promise<BenchReport[]> {
  const seconds = Number(process.env.BENCH_FRESHNESS_SECONDS ?? 60);
  const loops = Number(process.env.BENCH_FRESHNESS_READERS ?? 4);
  if (!(seconds > 0 && seconds <= 3600)) throw new Error('BENCH_FRESHNESS_SECONDS: 1..3600');
  if (!(Number.isInteger(loops) && loops >= 1 && loops <= 32))
    throw new Error('BENCH_FRESHNESS_READERS: 1..32');
  const reports: BenchReport[] = [];
  for (const scenario of freshnessScenarios(process.env.BENCH_FRESHNESS_SCENARIO))
    reports.push(
      await runScenario(scenario, seconds, loops, serviceOverrides(process.env.BENCH_FRESHNESS_A_ENV)),
    );
  return reports;
}
