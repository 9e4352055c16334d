import { sleep } from '../chaos/processes';
import { SANDBOX_API_KEY } from '../chaos/sandbox-process';
import type { BrowseSample } from './score';

/** Pages of one event's browse (limit 100), and of one upstream truth walk (limit 1000), at most. */
const MAX_PAGES = 100;
const REQUEST_TIMEOUT_MS = 15_000;

interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

async function getJson<T>(url: string, headers: Record<string, string>): Promise<T> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`GET ${new URL(url).pathname}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** Every active listing of one event upstream (the sandbox's own walk with the eventId filter). */
export async function upstreamListings(sandboxUrl: string, eventId: string): Promise<Map<string, string>> {
  const truth = new Map<string, string>();
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = new URL(`${sandboxUrl}/indexer/listings/active`);
    url.searchParams.set('eventId', eventId);
    url.searchParams.set('limit', '1000');
    if (cursor !== null) url.searchParams.set('cursor', cursor);
    const body = await getJson<Page<{ ticket_id: string | null; ask_price_minor: string }>>(url.toString(), {
      'x-api-key': SANDBOX_API_KEY,
    });
    for (const item of body.items)
      if (item.ticket_id !== null) truth.set(item.ticket_id, item.ask_price_minor);
    cursor = body.next_cursor;
    if (cursor === null) return truth;
  }
  throw new Error(`upstream walk of event ${eventId}: more than ${MAX_PAGES} pages`);
}

/** All pages of one event's listings through the service's read API: ticket id → price (minor). */
async function servedListings(
  serviceUrl: string,
  apiKey: string,
  eventId: string,
): Promise<{ served: Map<string, string>; dataAsOfMs: number | null }> {
  const headers = { authorization: `Bearer ${apiKey}` };
  const served = new Map<string, string>();
  // The oldest data_as_of among the pages (each page carries the event's own).
  let dataAsOfMs: number | null = null;
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = new URL(`${serviceUrl}/v1/events/${eventId}/listings`);
    url.searchParams.set('limit', '100');
    if (cursor !== null) url.searchParams.set('cursor', cursor);
    const body = await getJson<
      Page<{ ticket_id: string; price: { minor: string } }> & { data_as_of: string | null }
    >(url.toString(), headers);
    for (const item of body.items) served.set(item.ticket_id, item.price.minor);
    const asOf = body.data_as_of === null ? null : Date.parse(body.data_as_of);
    if (asOf !== null && (dataAsOfMs === null || asOf < dataAsOfMs)) dataAsOfMs = asOf;
    cursor = body.next_cursor;
    if (cursor === null) return { served, dataAsOfMs };
  }
  throw new Error(`browse of event ${eventId}: more than ${MAX_PAGES} pages`);
}

export interface ReaderOptions {
  serviceUrl: string;
  apiKey: string;
  sandboxUrl: string;
  busyEvents: readonly string[];
  /** Events with no market changes, browsed now and then (the large scenario's cold tail). */
  coldEvents: readonly string[];
  /** One browse in this many is of a cold event (when there are any). */
  coldEvery: number;
  loops: number;
  /** Pause between one loop's browses (a reader is not a tight loop; the machine has two cores). */
  thinkMs: number;
}

export interface ReaderTally {
  browses: number;
  errors: number;
  /** A bounded sample of the errors. */
  reasons: string[];
  eventPages: number;
}

/**
 * The reader: `loops` concurrent loops, each browsing one event at a time through the service's read API —
 * every page of its listings — and reading the upstream's truth for that event
 * right after the last page; every tenth browse also reads the first page of the events list. Runs until
 * `stop()` (or `maxMs`), each loop bounded in count by the time.
 */
export class Reader {
  readonly samples: BrowseSample[] = [];
  readonly tally: ReaderTally = { browses: 0, errors: 0, reasons: [], eventPages: 0 };
  private stopped = false;
  private loops: Promise<void>[] = [];
  private turn = 0;
  private nextBusy = 0;

  constructor(private readonly options: ReaderOptions) {}

  start(maxMs: number): void {
    const deadline = Date.now() + maxMs;
    this.loops = Array.from({ length: this.options.loops }, () => this.loop(deadline));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async loop(deadline: number): Promise<void> {
    const { busyEvents, coldEvents, coldEvery } = this.options;
    while (!this.stopped && Date.now() < deadline) {
      // One shared turn: the busy events round-robin across all loops, every coldEvery-th browse a cold one.
      const turn = this.turn++;
      const cold = coldEvents.length > 0 && turn % coldEvery === coldEvery - 1;
      const eventId = cold
        ? coldEvents[Math.floor(turn / coldEvery) % coldEvents.length]
        : busyEvents[this.nextBusy++ % busyEvents.length];
      try {
        if (turn % 10 === 0) await this.eventsPage();
        await this.browse(eventId, cold);
      } catch (error) {
        this.tally.errors++;
        if (this.tally.reasons.length < 10)
          this.tally.reasons.push(error instanceof Error ? error.message : String(error));
      }
      await sleep(this.options.thinkMs);
    }
  }

  private async eventsPage(): Promise<void> {
    await getJson(`${this.options.serviceUrl}/v1/events?limit=100`, {
      authorization: `Bearer ${this.options.apiKey}`,
    });
    this.tally.eventPages++;
  }

  private async browse(eventId: string, cold: boolean): Promise<void> {
    const { serviceUrl, apiKey, sandboxUrl } = this.options;
    const startMs = Date.now();
    const { served, dataAsOfMs } = await servedListings(serviceUrl, apiKey, eventId);
    const endMs = Date.now();
    const truth = await upstreamListings(sandboxUrl, eventId);
    this.tally.browses++;
    this.samples.push({ eventId, cold, startMs, endMs, served, truth, dataAsOfMs });
  }
}
