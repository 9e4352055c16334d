import { Agent, request } from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

/** Raw outcome of one or more load slices (latencies in ms). */
export interface LoadSample {
  latencies: number[];
  errors: number;
  seconds: number;
}

/** Merges slices of the same server and scenario into req/s and latency quantiles. */
export function summarize(samples: readonly LoadSample[]): LoadResult {
  const latencies = samples.flatMap((s) => s.latencies);
  const seconds = samples.reduce((sum, s) => sum + s.seconds, 0);
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: latencies.length,
    errors: samples.reduce((sum, s) => sum + s.errors, 0),
    seconds,
    rps: latencies.length / seconds,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
  };
}

function get(agent: Agent, port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET returning the parsed JSON body of a 200 (for collecting cursors before a run). */
export function getJson<T>(port: number, path: string, headers: Record<string, string>): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode === 200) resolve(JSON.parse(text) as T);
        else reject(new Error(`GET ${path} answered ${res.statusCode}: ${text.slice(0, 200)}`));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);

/**
 * Closed-loop load on loopback: `connections` keep-alive connections, each sending the next request as
 * soon as the previous answer arrived, for `seconds`. `nextPath` picks each request's path. Bounded:
 * stops at the deadline; a request in flight then still completes and counts.
 */
export async function runLoad(options: {
  port: number;
  connections: number;
  seconds: number;
  headers: Record<string, string>;
  nextPath: () => string;
}): Promise<LoadSample> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  let errors = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(options.seconds * 1e9));
  const loop = async (): Promise<void> => {
    while (process.hrtime.bigint() < deadline) {
      const t0 = process.hrtime.bigint();
      const status = await get(agent, options.port, options.nextPath(), options.headers).catch(() => 0);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (status !== 200) errors++;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return { latencies, errors, seconds };
}
