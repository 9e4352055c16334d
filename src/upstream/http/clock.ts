import { setTimeout as delay } from 'node:timers/promises';

/**
 * Time as the retry, deadline and rate-limit logic sees it. Injectable so tests run retries in virtual
 * time; per-attempt socket timeouts always use real timers (they bound real I/O).
 */
export interface UpstreamClock {
  now(): number;
  /** Resolves after `ms`; rejects if `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: UpstreamClock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    if (ms <= 0) return;
    await delay(ms, undefined, { signal });
  },
};
