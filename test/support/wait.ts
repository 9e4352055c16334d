/**
 * Polls `check` every `pollMs` until it holds; resolves with the time it took, rejects after `timeoutMs`
 * (every wait in the tests is bounded).
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = 100,
): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check()) return Date.now() - started;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
