import { benchReadApi } from './read-api.bench';
import { printReport, type BenchReport } from './report';
import { benchSandbox } from './sandbox-listings.bench';
import { benchUpstreamWalk } from './upstream-walk.bench';

/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run (the
 * machine is small and noisy, so absolute numbers are context, ratios and targets are the result).
 * BENCH_LISTINGS sets the dataset size (default 1,000,000). `npm run bench -- read` runs one suite
 * (sandbox, upstream, read). Exits 1 when a target is missed.
 */
async function main(): Promise<number> {
  const listings = Number(process.env.BENCH_LISTINGS ?? 1_000_000);
  const suites: Record<string, () => Promise<BenchReport>> = {
    sandbox: () => benchSandbox(listings),
    upstream: () => benchUpstreamWalk(Math.min(listings, 200_000)),
    read: () => benchReadApi(),
  };
  // `npm run bench -- <suite>` runs one suite; no argument runs them all.
  const only = process.argv[2];
  if (only !== undefined && !(only in suites)) {
    console.error(`unknown suite ${only}; one of ${Object.keys(suites).join(', ')}`);
    return 2;
  }
  const benches = Object.entries(suites)
    .filter(([name]) => only === undefined || name === only)
    .map(([, bench]) => bench);
  let ok = true;
  for (const bench of benches) ok = printReport(await bench()) && ok;
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
