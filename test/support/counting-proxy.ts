import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';

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
 * A loopback HTTP proxy in front of the upstream (the sandbox) that records every request it forwards, so a test
 * counts what the upstream saw from one replica (each replica gets its own proxy as its UPSTREAM_BASE_URL).
 */
export class CountingProxy {
  readonly requests: ProxiedRequest[] = [];
  private readonly server = createServer((req, res) => this.forward(req, res));
  private readonly target: URL;
  url = '';

  private constructor(target: string) {
    this.target = new URL(target);
  }

  static async start(target: string): Promise<CountingProxy> {
    const proxy = new CountingProxy(target);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const address = proxy.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    proxy.url = `http://127.0.0.1:${port}`;
    return proxy;
  }

  /** Requests that arrived in [from, to) whose path starts with `prefix`. */
  count(from: number, to: number, prefix = ''): number {
    return this.requests.filter((r) => r.at >= from && r.at < to && r.path.startsWith(prefix)).length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const traceparent = req.headers.traceparent;
    const entry: ProxiedRequest = {
      at: Date.now(),
      path: req.url ?? '',
      status: 0,
      answeredAt: 0,
      ...(typeof traceparent === 'string' ? { traceparent } : {}),
    };
    this.requests.push(entry);
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
