/** What `raceTimeout` answers when `ms` passed first. */
export const TIMED_OUT = Symbol('timed out');

/**
 * Resolves with `work`'s value, or with TIMED_OUT once `ms` have passed; the timer is always cleared.
 * `work` keeps running (a readiness probe answers in time and leaves the slow check to finish).
 */
export async function raceTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
