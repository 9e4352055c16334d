import { Agent } from 'node:http';
import Fastify from 'fastify';
import { benchSandboxListings, httpGet } from './sandbox-walk';
import { startSandbox } from '../src/sandbox/sandbox.server';
import { walkStaticPages } from './http-walk';
import type { BenchReport } from './report';

const PAGE_SIZE = 1000;

/** One real 1000-item page from the sandbox, to serve from a bare server as the baseline. */
async function samplePage(): Promise<string> {
  const sandbox = await startSandbox({ port: 0, seed: 'bench', events: 20, listings: 5000 });
  const agent = new Agent({ keepAlive: false });
  try {
    const url = new URL(`${sandbox.url}/indexer/listings/active?limit=${PAGE_SIZE}`);
    return await httpGet(agent, url, { 'x-api-key': sandbox.admin.apiKey });
  } finally {
    agent.destroy();
    await sandbox.close();
  }
}

/**
 * Sandbox listing pages vs a baseline measured in the same run: a bare Fastify route answering the
 * same pre-serialized 1000-item page (the floor cost of HTTP + JSON.parse on this machine). The ratio
 * says how much of the walk the sandbox's own work (cursor check, columnar read, serialisation) costs.
 */
export async function benchSandbox(listings: number): Promise<BenchReport> {
  const body = await samplePage();
  const bare = Fastify({ logger: false });
  bare.get('/page', (_req, reply) => reply.type('application/json').send(body));
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const address = bare.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const sandbox = await benchSandboxListings({ listings, pageSize: PAGE_SIZE });
  const baseline = await walkStaticPages(new URL(`http://127.0.0.1:${port}/page`), sandbox.pages);
  await bare.close();
  const ratio = sandbox.itemsPerSecond / baseline.itemsPerSecond;
  return {
    name: `sandbox: walk ${listings.toLocaleString('en')} active listings at limit=${PAGE_SIZE}`,
    rows: [
      ['sandbox items/s', Math.round(sandbox.itemsPerSecond).toLocaleString('en')],
      ['sandbox pages/s', sandbox.pagesPerSecond.toFixed(1)],
      [
        'baseline items/s (bare server, same page bytes)',
        Math.round(baseline.itemsPerSecond).toLocaleString('en'),
      ],
      ['ratio sandbox / baseline', ratio.toFixed(2)],
      ['items walked', sandbox.items.toLocaleString('en')],
      ['heap used MB (dataset live)', sandbox.heapUsedMb.toFixed(0)],
      ['rss MB', sandbox.rssMb.toFixed(0)],
    ],
    targets: [
      { what: 'walks every listing', ok: sandbox.items === listings },
      { what: '>= 50,000 listing items/s', ok: sandbox.itemsPerSecond >= 50_000 },
      // Issue 9: the catalog sync needs the sandbox at >= 0.6x a bare server sending the same bytes.
      { what: 'ratio sandbox / baseline >= 0.6', ok: ratio >= 0.6 },
      { what: 'rss < 1024 MB', ok: sandbox.rssMb < 1024 },
    ],
  };
}
