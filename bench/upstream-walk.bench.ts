import pino from 'pino';
import { walkListingsRaw } from './sandbox-walk';
import { startSandbox } from '../src/sandbox/sandbox.server';
import { UpstreamClient } from '../src/upstream/upstream.client';
import type { BenchReport } from './report';

const PAGE_SIZE = 1000;

async function clientWalk(client: UpstreamClient): Promise<{ items: number; seconds: number }> {
  let items = 0;
  const started = process.hrtime.bigint();
  for await (const page of client.walkActiveListings({ limit: PAGE_SIZE })) items += page.items.length;
  return { items, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/**
 * What the upstream client's safety costs on the sync path: walking every active listing through
 * UpstreamClient (precision-safe JSON, bigint decoding, item validation, limiter, breaker, per-attempt
 * logs at `warn`) vs a bare GET + JSON.parse walk of the same sandbox in the same run.
 */
export async function benchUpstreamWalk(listings: number): Promise<BenchReport> {
  const sandbox = await startSandbox({
    port: 0,
    seed: 'bench',
    events: 200,
    listings,
    maxPageLimit: PAGE_SIZE,
  });
  const client = new UpstreamClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.admin.apiKey,
    environment: 'sandbox',
    rateLimit: { ratePerSecond: 10_000 },
    logger: pino({ level: 'warn' }),
  });
  try {
    // Baseline: the same walk with a bare GET + JSON.parse per page (no validation, no bigint decoding).
    const raw = await walkListingsRaw(sandbox.url, sandbox.admin.apiKey, PAGE_SIZE);
    const typed = await clientWalk(client);
    const rawRate = raw.items / raw.seconds;
    const typedRate = typed.items / typed.seconds;
    return {
      name: `upstream client: walk ${listings.toLocaleString('en')} listings at limit=${PAGE_SIZE}`,
      rows: [
        ['client items/s (validated, bigint)', Math.round(typedRate).toLocaleString('en')],
        ['baseline items/s (GET + JSON.parse)', Math.round(rawRate).toLocaleString('en')],
        ['ratio client / baseline', (typedRate / rawRate).toFixed(2)],
      ],
      targets: [
        {
          what: 'client walks every listing exactly as the raw walk',
          ok: typed.items === raw.items && raw.items === listings,
        },
        { what: 'client keeps >= 40% of the raw walk rate', ok: typedRate / rawRate >= 0.4 },
      ],
    };
  } finally {
    client.close();
    await sandbox.close();
  }
}
