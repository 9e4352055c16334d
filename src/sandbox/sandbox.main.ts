import 'reflect-metadata';
import { loadSandboxOptions } from './sandbox.env';
import { startSandbox } from './sandbox.server';

/**
 * Standalone sandbox (`npm run sandbox`). Logs where it listens and how big the dataset is; never the keys
 * (the defaults are in docs/sandbox.md).
 */
async function main(): Promise<void> {
  const options = loadSandboxOptions(process.env);
  const sandbox = await startSandbox(options);
  const stats = sandbox.admin.stats();
  console.log(
    `sandbox upstream listening on ${sandbox.url} (${stats.events} events, ${stats.activeListings} active listings)`,
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`sandbox: ${signal} received, closing`);
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('sandbox: close failed', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
