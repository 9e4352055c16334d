import {
  Agent,
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, so a proxy never forwards them. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

const endToEnd = (headers: IncomingHttpHeaders): IncomingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));

interface Backend {
  readonly url: URL;
  /** Keep-alive connections to this backend, reused across requests like a real balancer's. */
  readonly agent: Agent;
  ready: boolean;
  /** Requests sent to this backend so far. */
  routed: number;
}

export interface RoundRobinProxyOptions {
  /** How often each backend's `/health/ready` is probed (ms); one failed probe takes it out, one success puts it in. */
  probeIntervalMs?: number;
  probeTimeoutMs?: number;
}

/**
 * A loopback load balancer in front of service replicas, for the rolling-restart test: round-robin over the
 * backends whose last `GET /health/ready` answered 200, keep-alive connections to the backends, and no retry of
 * a failed request (a retry would hide exactly the failures the test looks for). A request that finds no ready
 * backend, or whose backend fails before answering, gets a 502 with `x-proxy-error` saying why.
 */
export class RoundRobinProxy {
  url = '';
  private readonly backends: Backend[];
  private readonly server = createServer((req, res) => this.forward(req, res));
  private next = 0;
  private closed = false;
  private readonly probing: Promise<void>[] = [];
  private readonly probeIntervalMs: number;
  private readonly probeTimeoutMs: number;

  private constructor(backendUrls: string[], options: RoundRobinProxyOptions) {
    this.backends = backendUrls.map((url) => ({
      url: new URL(url),
      agent: new Agent({ keepAlive: true, maxSockets: 64 }),
      ready: false,
      routed: 0,
    }));
    this.probeIntervalMs = options.probeIntervalMs ?? 150;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 1_000;
  }

  static async start(backendUrls: string[], options: RoundRobinProxyOptions = {}): Promise<RoundRobinProxy> {
    const proxy = new RoundRobinProxy(backendUrls, options);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const address = proxy.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    proxy.url = `http://127.0.0.1:${port}`;
    for (const backend of proxy.backends) proxy.probing.push(proxy.probeLoop(backend));
    return proxy;
  }

  /** Whether the balancer currently routes to the backend at `url` (its last probe answered 200). */
  isReady(url: string): boolean {
    return this.backend(url).ready;
  }

  /** Requests routed to the backend at `url` so far. */
  routedTo(url: string): number {
    return this.backend(url).routed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all(this.probing);
    for (const backend of this.backends) backend.agent.destroy();
  }

  private backend(url: string): Backend {
    const found = this.backends.find((b) => b.url.origin === new URL(url).origin);
    if (!found) throw new Error(`no backend ${url}`);
    return found;
  }

  /** Probes until close(); each probe on its own connection (as balancers' health checks usually are). */
  private async probeLoop(backend: Backend): Promise<void> {
    while (!this.closed) {
      backend.ready = await this.probe(backend);
      await new Promise((r) => setTimeout(r, this.probeIntervalMs));
    }
  }

  private probe(backend: Backend): Promise<boolean> {
    return new Promise((resolve) => {
      const req = request(
        new URL('/health/ready', backend.url),
        { agent: false, timeout: this.probeTimeoutMs },
        (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode === 200));
          res.once('error', () => resolve(false));
        },
      );
      req.once('timeout', () => req.destroy(new Error('probe timed out')));
      req.once('error', () => resolve(false));
      req.end();
    });
  }

  private pick(): Backend | undefined {
    for (let i = 0; i < this.backends.length; i++) {
      const backend = this.backends[(this.next + i) % this.backends.length];
      if (backend?.ready) {
        this.next = (this.next + i + 1) % this.backends.length;
        return backend;
      }
    }
    return undefined;
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const fail = (why: string): void => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(502, { 'x-proxy-error': why, 'content-type': 'text/plain' });
      res.end(why);
    };
    const backend = this.pick();
    if (!backend) {
      req.resume();
      fail('no ready backend');
      return;
    }
    backend.routed++;
    const upstream = request(
      {
        host: backend.url.hostname,
        port: backend.url.port,
        method: req.method,
        path: req.url,
        headers: endToEnd(req.headers),
        agent: backend.agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
        answer.once('error', () => res.destroy());
      },
    );
    upstream.once('error', (error: NodeJS.ErrnoException) => fail(`backend: ${error.code ?? error.message}`));
    req.pipe(upstream);
  }
}
