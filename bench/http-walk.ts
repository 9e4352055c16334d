import { Agent, request } from 'node:http';

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

export interface Rate {
  items: number;
  pages: number;
  seconds: number;
  itemsPerSecond: number;
}

/** Requests `pages` pages from `url` over one keep-alive socket, parsing each like a client would. */
export async function walkStaticPages(url: URL, pages: number): Promise<Rate> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    let items = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < pages; i++) {
      const page = JSON.parse(await httpGet(agent, url)) as { items: unknown[] };
      items += page.items.length;
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { items, pages, seconds, itemsPerSecond: items / seconds };
  } finally {
    agent.destroy();
  }
}
