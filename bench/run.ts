import { benchCatalogSync } from './catalog-sync.bench';
import { benchCheckout } from './checkout.bench';
import { benchFreshness } from './freshness.bench';
import { benchReadApi } from './read-api.bench';
import { printReport, type BenchReport } from './report';
import { benchSandbox } from './sandbox-listings.bench';
import { benchUpstreamWalk } from './upstream-walk.bench';
import { benchWebhooks } from './webhooks.bench';

/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run (the
 * machine is small and noisy, so absolute numbers are context, ratios and targets are the result).
 * `npm run bench -- <suite>` runs one suite (sandbox, upstream-walk, sync, read, checkout, freshness, webhooks). BENCH_LISTINGS sets
 * the dataset size (default 1,000,000; BENCH_SYNC_CATALOG=0 leaves the sync suite's catalog-event passes out), BENCH_CHECKOUT_ORDERS
 * the checkout orders (200); the freshness suite runs only by name
 * (BENCH_FRESHNESS_SCENARIO, BENCH_FRESHNESS_SECONDS, BENCH_FRESHNESS_READERS, BENCH_FRESHNESS_A_ENV: docs/BENCHMARKS.md),
 * and so does webhooks (outbox → 10 loopback endpoints through 2 replicas: BENCH_WEBHOOKS_SECONDS, BENCH_WEBHOOKS_RATE,
 * BENCH_WEBHOOKS_SLOW_RATE, BENCH_WEBHOOKS_SLOW_MS, BENCH_WEBHOOKS_WARMUP, BENCH_WEBHOOKS_ENV, BENCH_WEBHOOKS_CPU_PROF:
 * docs/BENCHMARKS.md). Exits 1 when a target is missed.
 */
/** Suites a bare `npm run bench` leaves out (minutes, or processes of their own): run them by name. */
const BY_NAME_ONLY = new Set(['freshness', 'webhooks']);

async function main(): Promise<number> {
  const listings = Number(process.env.BENCH_LISTINGS ?? 1_000_000);
  const suites: Record<string, () => Promise<BenchReport | BenchReport[]>> = {
    sandbox: () => benchSandbox(listings),
    'upstream-walk': () => benchUpstreamWalk(Math.min(listings, 200_000)),
    sync: () => benchCatalogSync(listings),
    checkout: () => benchCheckout(Number(process.env.BENCH_CHECKOUT_ORDERS ?? 200)),
    read: () => benchReadApi(),
    // Not in a bare `npm run bench`: minutes per scenario and processes of its own (run it by name).
    freshness: () => benchFreshness(),
    // By name only too: two replicas and ten receivers for half a minute.
    webhooks: () => benchWebhooks(),
  };
  // `npm run bench -- <suite> [<suite>…]` runs only those suites; no argument runs them all but freshness and webhooks.
  const selected = process.argv.slice(2);
  const unknown = selected.filter((name) => !(name in suites));
  if (unknown.length > 0)
    throw new Error(`unknown bench suite ${unknown.join(', ')}; known: ${Object.keys(suites).join(', ')}`);
  let ok = true;
  for (const [name, bench] of Object.entries(suites)) {
    if (selected.length === 0 ? BY_NAME_ONLY.has(name) : !selected.includes(name)) continue;
    for (const report of [await bench()].flat()) ok = printReport(report) && ok;
  }
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
