import { getHeapStatistics } from 'node:v8';

/**
 * The V8 old-generation limit the service runs with, in MB (`npm start`, the replica command of docs/DEPLOY.md,
 * the benches' service processes). Besides the limit itself, it sets how far V8 lets the heap grow between two
 * full collections: with no limit given, V8 takes a quarter of the host's memory (4 GiB on this 24 GiB machine)
 * and allows the old generation 4 times its live size after a collection, so a sync pass's ~40 MB live heap
 * grew to 145–213 MB before its next mark-compact and the pass's peak RSS to 270–304 MB. Under 1 GiB the factor
 * is about 1.6: the same pass peaks at ~95 MB of heap and ~185 MB RSS, at the same speed (docs/BENCHMARKS.md
 * "Session 23: the service's heap limit").
 */
export const SERVICE_HEAP_LIMIT_MB = 1024;

/** The node options every start of the service passes before its script (package.json `start` and `bench`). */
export const SERVICE_NODE_FLAGS: readonly string[] = [`--max-old-space-size=${SERVICE_HEAP_LIMIT_MB}`];

/**
 * node's arguments for the built service as `npm start` runs it: its options, the tracing register first
 * (docs/tracing.md), then main. The test harness and the benches' replicas start it with these.
 */
export const SERVICE_MAIN_ARGS: readonly string[] = [
  ...SERVICE_NODE_FLAGS,
  '--require',
  './dist/src/tracing/tracing.register.js',
  'dist/src/main.js',
];

/**
 * V8 adds the young generation (up to 3 semi-spaces, 48 MB at the default size) to the old-generation limit
 * in heap_size_limit; anything above this was started with a larger limit or none.
 */
const YOUNG_GENERATION_ALLOWANCE_MB = 64;

/** This process's V8 heap limit (old generation plus young), in whole MB. */
export function heapLimitMb(limitBytes: number = getHeapStatistics().heap_size_limit): number {
  return Math.round(limitBytes / 2 ** 20);
}

/**
 * Whether a process with this heap limit was started without the service's flags (or with a larger limit): it
 * still works, but a sync pass's heap may grow about twice as far before a collection.
 */
export function startedWithoutHeapLimit(limitMb: number): boolean {
  return limitMb > SERVICE_HEAP_LIMIT_MB + YOUNG_GENERATION_ALLOWANCE_MB;
}

/**
 * What main.ts warns of at startup (docs/DEPLOY.md "Memory"): a process started without the service's node
 * options, and a response cache allowed over a quarter of the heap limit (its bodies are heap strings).
 */
export function heapWarnings(limitMb: number, cacheMaxBytes: number): string[] {
  const warnings: string[] = [];
  if (startedWithoutHeapLimit(limitMb)) {
    warnings.push(
      `started without ${SERVICE_NODE_FLAGS.join(' ')} (heap limit ${limitMb} MB): the heap may grow about ` +
        'twice as far between full collections (docs/DEPLOY.md "Memory")',
    );
  }
  const cacheMb = Math.ceil(cacheMaxBytes / 2 ** 20);
  if (cacheMb > limitMb / 4) {
    warnings.push(
      `LISTINGS_CACHE_MAX_BYTES (${cacheMb} MB) is over a quarter of the heap limit (${limitMb} MB): raise ` +
        '--max-old-space-size by the cache\'s size (docs/DEPLOY.md "Memory")',
    );
  }
  return warnings;
}
