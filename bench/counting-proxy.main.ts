import { CountingProxy } from './counting-proxy';

/**
 * The counting proxy as a process of its own (`node dist/bench/counting-proxy.main.js`): forwards everything to
 * COUNTING_PROXY_TARGET, listens on 127.0.0.1:COUNTING_PROXY_PORT (0: a free port), prints
 * `counting proxy listening on <url>` once, and answers `GET /__counting-proxy/arrivals` with what it recorded.
 * Stops on SIGTERM / SIGINT.
 */
async function main(): Promise<void> {
  const target = process.env.COUNTING_PROXY_TARGET;
  if (!target || !/^http:\/\/127\.0\.0\.1:\d+\/?$/.test(target))
    throw new Error('COUNTING_PROXY_TARGET: http://127.0.0.1:<port> expected (loopback only)');
  const proxy = await CountingProxy.start(target, Number(process.env.COUNTING_PROXY_PORT ?? 0));
  console.log(`counting proxy listening on ${proxy.url}`);
  const stop = (): void => {
    void proxy.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
