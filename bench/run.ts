import { printReport, type BenchReport } from './report';
import { benchSandbox } from './sandbox-listings.bench';
import { benchUpstreamWalk } from './upstream-walk.bench';

/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run (the
 * machine is small and noisy, so absolute numbers are context, ratios and targets are the result).
 * BENCH_LISTINGS sets the dataset size (default 1,000,000). Exits 1 when a target is missed.
 */
async function main(): Promise<number> {
  const listings = Number(process.env.BENCH_LISTINGS ?? 1_000_000);
  const benches: (() => Promise<BenchReport>)[] = [
    () => benchSandbox(listings),
    () => benchUpstreamWalk(Math.min(listings, 200_000)),
  ];
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
