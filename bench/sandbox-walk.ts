import { request, Agent } from 'node:http';
import { startSandbox } from '../src/sandbox/sandbox.server';

export interface SandboxBenchOptions {
  listings: number;
  events?: number;
  pageSize?: number;
  seed?: string;
}

export interface SandboxBenchResult {
  items: number;
  pages: number;
  seconds: number;
  itemsPerSecond: number;
  pagesPerSecond: number;
  heapUsedMb: number;
  rssMb: number;
}

/** GET over a given agent; resolves the body text of a 200, rejects on anything else. */
export function httpGet(agent: Agent, url: URL, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode === 200) resolve(body);
        else reject(new Error(`GET ${url.pathname} answered ${res.statusCode}`));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Walks every active listing over one keep-alive loopback connection with plain GET + JSON.parse (what a
 * bare client costs), following next_cursor until null.
 */
export async function walkListingsRaw(
  baseUrl: string,
  apiKey: string,
  pageSize: number,
): Promise<{ items: number; pages: number; seconds: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    let items = 0;
    let pages = 0;
    let cursor: string | null = null;
    const started = process.hrtime.bigint();
    do {
      const url = new URL(`${baseUrl}/indexer/listings/active`);
      url.searchParams.set('limit', String(pageSize));
      if (cursor !== null) url.searchParams.set('cursor', cursor);
      const page = JSON.parse(await httpGet(agent, url, { 'x-api-key': apiKey })) as {
        items: unknown[];
        next_cursor: string | null;
      };
      items += page.items.length;
      pages++;
      cursor = page.next_cursor;
    } while (cursor !== null);
    return { items, pages, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
  } finally {
    agent.destroy();
  }
}

/**
 * Generates `listings` listings, then walks every active listing over loopback HTTP at the maximum page
 * size, parsing each page like a client would. Memory is sampled at the end, with the dataset still live.
 */
export async function benchSandboxListings(opts: SandboxBenchOptions): Promise<SandboxBenchResult> {
  const pageSize = opts.pageSize ?? 1000;
  const sandbox = await startSandbox({
    port: 0,
    seed: opts.seed ?? 'bench',
    events: opts.events ?? Math.max(20, Math.min(5000, Math.ceil(opts.listings / 200))),
    listings: opts.listings,
    maxPageLimit: Math.max(1000, pageSize),
  });
  try {
    const { items, pages, seconds } = await walkListingsRaw(sandbox.url, sandbox.admin.apiKey, pageSize);
    const memory = process.memoryUsage();
    return {
      items,
      pages,
      seconds,
      itemsPerSecond: items / seconds,
      pagesPerSecond: pages / seconds,
      heapUsedMb: memory.heapUsed / 1_048_576,
      rssMb: memory.rss / 1_048_576,
    };
  } finally {
    await sandbox.close();
  }
}
