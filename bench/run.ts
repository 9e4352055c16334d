import { benchCatalogSync } from './catalog-sync.bench';
import { benchCheckout } from './checkout.bench';
import { benchReadApi } from './read-api.bench';
import { printReport, type BenchReport } from './report';
import { benchSandbox } from './sandbox-listings.bench';
import { benchUpstreamWalk } from './upstream-walk.bench';

/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run (the
 * machine is small and noisy, so absolute numbers are context, ratios and targets are the result).
 * `npm run bench -- <suite>` runs one suite (sandbox, upstream-walk, sync, read, checkout). BENCH_LISTINGS sets
 * the dataset size (default 1,000,000), BENCH_CHECKOUT_ORDERS the checkout orders (200). Exits 1 when a
 * target is missed.
 */
async function main(): Promise<number> {
  const listings = Number(process.env.BENCH_LISTINGS ?? 1_000_000);
  const suites: Record<string, () => Promise<BenchReport>> = {
    sandbox: () => benchSandbox(listings),
    'upstream-walk': () => benchUpstreamWalk(Math.min(listings, 200_000)),
    sync: () => benchCatalogSync(listings),
    checkout: () => benchCheckout(Number(process.env.BENCH_CHECKOUT_ORDERS ?? 200)),
    read: () => benchReadApi(),
  };
  // `npm run bench -- <suite> [<suite>…]` runs only those suites; no argument runs them all.
  const selected = process.argv.slice(2);
  const unknown = selected.filter((name) => !(name in suites));
  if (unknown.length > 0)
    throw new Error(`unknown bench suite ${unknown.join(', ')}; known: ${Object.keys(suites).join(', ')}`);
  let ok = true;
  for (const [name, bench] of Object.entries(suites))
    if (selected.length === 0 || selected.includes(name)) ok = printReport(await bench()) && ok;
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
