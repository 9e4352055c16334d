import { setPriority } from 'node:os';
import { percentile } from '../chaos/orders-client';
import { waitFor, type ProcessGroup } from '../chaos/processes';
import { ARRIVALS_PATH, busiestSecond, type ProxiedRequest } from '../counting-proxy';

const LISTINGS_PATH = '/indexer/listings/active';
/** Nice value of the proxy process (lower = more CPU when the machine is loaded). */
const PROXY_PRIORITY = -10;

/**
 * A's upstream, counted at the wire: a counting proxy (`bench/counting-proxy.ts`) as a process of its own between
 * A and the sandbox (A's UPSTREAM_BASE_URL), so that the bench's own work (reader, market, truth reads) neither
 * delays A's requests nor bunches their arrival stamps. Everything else (B, the direct integrator, the reader's truth
 * reads) talks to the sandbox directly: what the proxy saw is A's and only A's.
 */
export class WireProxy {
  private constructor(readonly url: string) {}

  static async start(group: ProcessGroup, target: string): Promise<WireProxy> {
    const proc = group.spawn('wire-proxy', ['dist/bench/counting-proxy.main.js'], {
      COUNTING_PROXY_TARGET: target,
      COUNTING_PROXY_PORT: '0',
    });
    // The instrument should not lag: on a loaded machine a starved proxy stamps arrivals late and unevenly (and
    // delays A's requests). Raised priority where allowed (root); otherwise it runs as it is.
    try {
      setPriority(proc.pid, PROXY_PRIORITY);
    } catch {
      // not permitted: measured at normal priority
    }
    let url = '';
    await waitFor(
      'counting proxy listening',
      () => {
        if (proc.exited()) throw new Error(`counting proxy exited while starting:\n${proc.output()}`);
        url = /counting proxy listening on (http:\/\/\S+)/.exec(proc.output())?.[1] ?? '';
        return url !== '';
      },
      30_000,
      50,
    );
    return new WireProxy(url);
  }

  /** Every request A made so far, by arrival at the proxy (read once, at the end of a run). */
  async arrivals(): Promise<ProxiedRequest[]> {
    const res = await fetch(`${this.url}${ARRIVALS_PATH}`, { signal: AbortSignal.timeout(30_000) });
    if (res.status !== 200) throw new Error(`GET ${ARRIVALS_PATH}: ${res.status}`);
    const body = (await res.json()) as { requests: ProxiedRequest[]; dropped: number };
    if (body.dropped > 0) throw new Error(`counting proxy dropped ${body.dropped} requests (over its bound)`);
    return body.requests;
  }
}

/** What the wire saw of A: the busiest 1-s windows and the mean rate, against the budget. */
export interface WireFigures {
  /** Requests that arrived while A ran (from its start to the end of the run). */
  total: number;
  /** Busiest sliding 1-s window over the whole run (startup sync included) and its start (ms). */
  busiest: { count: number; at: number };
  /** Busiest sliding 1-s window while the market made changes. */
  busiestDuring: number;
  /** Busiest aligned window (clock seconds, [n s, n+1 s)) over the whole run. */
  busiestAligned: number;
  /** Requests a second over the changes' window. */
  meanDuring: number;
  /** The sandbox's answer time as the proxy saw it (first byte of the answer − arrival), ms: p50, p99, max. */
  answer: { p50: number; p99: number; max: number; overOneSecond: number; unanswered: number };
}

export function wireFigures(requests: readonly ProxiedRequest[], fromMs: number, toMs: number): WireFigures {
  const times = requests.map((r) => r.at);
  const during = times.filter((t) => t >= fromMs && t < toMs);
  const aligned = new Map<number, number>();
  for (const t of times) aligned.set(Math.floor(t / 1000), (aligned.get(Math.floor(t / 1000)) ?? 0) + 1);
  const answered = requests.filter((r) => r.answeredAt > 0).map((r) => r.answeredAt - r.at);
  return {
    answer: {
      p50: percentile(answered, 50),
      p99: percentile(answered, 99),
      max: percentile(answered, 100),
      overOneSecond: answered.filter((ms) => ms > 1000).length,
      unanswered: requests.length - answered.length,
    },
    total: times.length,
    busiest: busiestSecond(times),
    busiestDuring: busiestSecond(during).count,
    busiestAligned: Math.max(0, ...aligned.values()),
    meanDuring: toMs > fromMs ? during.length / ((toMs - fromMs) / 1000) : Number.NaN,
  };
}

/** A's reads of each event's listings (`eventId` filter, any page), by arrival time: when its walks read it. */
export function eventReads(requests: readonly ProxiedRequest[]): Map<string, number[]> {
  const byEvent = new Map<string, number[]>();
  for (const request of requests) {
    if (!request.path.startsWith(LISTINGS_PATH)) continue;
    const eventId = new URL(request.path, 'http://proxy').searchParams.get('eventId');
    if (eventId === null) continue;
    const list = byEvent.get(eventId) ?? [];
    list.push(request.at);
    byEvent.set(eventId, list);
  }
  for (const list of byEvent.values()) list.sort((a, b) => a - b);
  return byEvent;
}
