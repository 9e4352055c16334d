import { benchCheckout } from './checkout.bench';
import { printReport, type BenchReport } from './report';
import { benchSandbox } from './sandbox-listings.bench';
import { benchUpstreamWalk } from './upstream-walk.bench';

/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run (the
 * machine is small and noisy, so absolute numbers are context, ratios and targets are the result).
 * BENCH_LISTINGS sets the dataset size (default 1,000,000), BENCH_CHECKOUT_ORDERS the checkout orders (200).
 * `npm run bench -- <suite...>` runs only the named suites. Exits 1 when a target is missed.
 */
async function main(): Promise<number> {
  const listings = Number(process.env.BENCH_LISTINGS ?? 1_000_000);
  const benches: Record<string, () => Promise<BenchReport>> = {
    sandbox: () => benchSandbox(listings),
    'upstream-walk': () => benchUpstreamWalk(Math.min(listings, 200_000)),
    checkout: () => benchCheckout(Number(process.env.BENCH_CHECKOUT_ORDERS ?? 200)),
  };
  // `npm run bench -- checkout` runs the named suites only; no name runs them all.
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = names.filter((n) => !(n in benches));
  if (unknown.length > 0)
    throw new Error(`unknown bench ${unknown.join(', ')}: ${Object.keys(benches).join(', ')}`);
  let ok = true;
  for (const name of names.length > 0 ? names : Object.keys(benches))
    ok = printReport(await benches[name]()) && ok;
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
