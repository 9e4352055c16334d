import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * One request the proxy forwarded: when it arrived (ms, this process's clock), its path, the answer's status and
 * its traceparent.
 */
export interface ProxiedRequest {
  at: number;
  path: string;
  status: number;
  answeredAt: number;
  /** The W3C trace-context header the request carried, if any (tracing e2e). */
  traceparent?: string;
}

/**
 * `GET` on this path is answered by the proxy itself (never forwarded, never recorded): every request recorded so
 * far as JSON `{ requests, dropped }`. A proxy running as its own process (`counting-proxy.main.ts`) is read this way.
 */
export const ARRIVALS_PATH = '/__counting-proxy/arrivals';
/** Requests recorded at most (a long bench run stays bounded in memory); the ones beyond are only counted. */
const MAX_RECORDED = 2_000_000;
/** Sampling interval of the event-loop delay monitor (ms): a delay is known to within this. */
const LOOP_DELAY_RESOLUTION_MS = 10;

/**
 * A loopback HTTP proxy in front of the upstream (the sandbox) that records every request it forwards, by arrival
 * time, so a test or a bench counts what the upstream saw from one replica (each replica gets its own proxy as
 * its UPSTREAM_BASE_URL). Tests run it in their own process; the freshness bench runs it as a process of its own
 * (`counting-proxy.main.ts`), so that the bench's own work never delays, and so bunches, the arrival stamps.
 */
export class CountingProxy {
  readonly requests: ProxiedRequest[] = [];
  /** Requests forwarded but not recorded (beyond MAX_RECORDED). */
  dropped = 0;
  private readonly server = createServer((req, res) => this.forward(req, res));
  /** This process's event-loop delay since the proxy started: how late an arrival can have been stamped. */
  private readonly loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  private readonly target: URL;
  url = '';

  private constructor(target: string) {
    this.target = new URL(target);
  }

  static async start(target: string, port = 0): Promise<CountingProxy> {
    const proxy = new CountingProxy(target);
    proxy.loopDelay.enable();
    await new Promise<void>((resolve) => proxy.server.listen(port, '127.0.0.1', resolve));
    const address = proxy.server.address();
    const bound = typeof address === 'object' && address !== null ? address.port : 0;
    proxy.url = `http://127.0.0.1:${bound}`;
    return proxy;
  }

  /** Requests that arrived in [from, to) whose path starts with `prefix`. */
  count(from: number, to: number, prefix = ''): number {
    return this.requests.filter((r) => r.at >= from && r.at < to && r.path.startsWith(prefix)).length;
  }

  /**
   * How late (ms) an arrival may have been stamped since the proxy started: the stamp is taken when this process's
   * event loop gets to the request, so a loaded process stamps late by up to its worst loop delay (plus the
   * monitor's resolution). `busiestSecond(times, 1000 - stampsLateByMs())` counts only what was sent within a second.
   */
  stampsLateByMs(): number {
    return Math.ceil(this.loopDelay.max / 1e6) + LOOP_DELAY_RESOLUTION_MS;
  }

  async close(): Promise<void> {
    this.loopDelay.disable();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const at = Date.now();
    if (req.method === 'GET' && req.url === ARRIVALS_PATH) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ requests: this.requests, dropped: this.dropped }));
      return;
    }
    const traceparent = req.headers.traceparent;
    const entry: ProxiedRequest = {
      at,
      path: req.url ?? '',
      status: 0,
      answeredAt: 0,
      ...(typeof traceparent === 'string' ? { traceparent } : {}),
    };
    if (this.requests.length < MAX_RECORDED) this.requests.push(entry);
    else this.dropped++;
    const upstream = request(
      {
        host: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        entry.status = answer.statusCode ?? 0;
        entry.answeredAt = Date.now();
        res.writeHead(entry.status, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}

/**
 * The most requests that arrived within any one second: a sliding, half-open window [t, t + 1000) over the arrival
 * times (the strictest reading of "requests per second": every 1-s window, not only those aligned to a clock
 * second). `at` is the arrival time that opens the busiest window. `windowMs` shortens the window by how late the
 * counting process may have stamped an arrival (`CountingProxy.stampsLateByMs`): k stamps within 1000 − d ms are k
 * arrivals within one second.
 */
export function busiestSecond(times: readonly number[], windowMs = 1000): { count: number; at: number } {
  const sorted = [...times].sort((x, y) => x - y);
  let best = { count: 0, at: 0 };
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j] - sorted[i] >= windowMs) i++;
    if (j - i + 1 > best.count) best = { count: j - i + 1, at: sorted[i] };
  }
  return best;
}
