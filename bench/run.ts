import { benchCatalogSync } from './catalog-sync.bench';
import { benchCheckout } from './checkout.bench';
import { benchFreshness } from './freshness.bench';
import { benchReadApi } from './read-api.bench';
import { printReport, type BenchReport } from './report';
import { benchSandbox } from './sandbox-listings.bench';
import { benchUpstreamWalk } from './upstream-walk.bench';

/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run (the
 * machine is small and noisy, so absolute numbers are context, ratios and targets are the result).
 * `npm run bench -- <suite>` runs one suite (sandbox, upstream-walk, sync, read, checkout, freshness). BENCH_LISTINGS sets
 * the dataset size (default 1,000,000), BENCH_CHECKOUT_ORDERS the checkout orders (200); the freshness suite runs only by name
 * (BENCH_FRESHNESS_SCENARIO, BENCH_FRESHNESS_SECONDS, BENCH_FRESHNESS_READERS, BENCH_FRESHNESS_A_ENV: docs/BENCHMARKS.md). Exits 1 when a
 * target is missed.
 */
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
  };
  // `npm run bench -- <suite> [<suite>…]` runs only those suites; no argument runs them all but freshness.
  const selected = process.argv.slice(2);
  const unknown = selected.filter((name) => !(name in suites));
  if (unknown.length > 0)
    throw new Error(`unknown bench suite ${unknown.join(', ')}; known: ${Object.keys(suites).join(', ')}`);
  let ok = true;
  for (const [name, bench] of Object.entries(suites)) {
    if (selected.length === 0 ? name === 'freshness' : !selected.includes(name)) continue;
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
