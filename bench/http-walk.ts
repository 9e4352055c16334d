import { Agent } from 'node:http';
import { httpGet } from './sandbox-walk';

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
