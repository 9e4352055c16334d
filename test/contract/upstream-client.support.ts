import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach } from 'vitest';
import { MetricsService } from '../../src/metrics/metrics.service';
import { UpstreamClient } from '../../src/upstream/upstream.client';
import { UpstreamError } from '../../src/upstream/upstream.error';
import { agentOf, createUpstreamHttpService } from '../../src/upstream/http/attempt';
import type { UpstreamClock } from '../../src/upstream/http/clock';
import type { UpstreamLogger } from '../../src/upstream/http/logger';
import { resolveUpstreamOptions, type UpstreamOptions } from '../../src/upstream/upstream.options';

/** Virtual time: sleeps return at once and move the clock; real time still passes underneath. */
export interface VirtualClock extends UpstreamClock {
  sleeps: number[];
}

export function virtualClock(): VirtualClock {
  let offset = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => Date.now() + offset,
    sleep: async (ms, signal) => {
      if (signal?.aborted === true) throw new Error('aborted');
      sleeps.push(ms);
      offset += Math.max(0, ms);
      await Promise.resolve();
    },
  };
}

export interface CapturedLogs extends UpstreamLogger {
  lines: string[];
}

export function captureLogger(): CapturedLogs {
  const lines: string[] = [];
  const write = (level: string) => (obj: object, msg?: string) => {
    lines.push(JSON.stringify({ level, msg, ...obj }));
  };
  return { lines, info: write('info'), warn: write('warn') };
}

export interface TestClient {
  client: UpstreamClient;
  clock: VirtualClock;
  logs: CapturedLogs;
  metrics: MetricsService;
  /** Sockets of the client's keep-alive pool: in use (requests in flight) and idle (kept for reuse). */
  connectionStats(): { inUse: number; idle: number };
  /** The adaptive limiter's current rate (lowered after 429s), as its gauge reports it. */
  ratePerSecond(): Promise<number>;
}

const count = (group: NodeJS.ReadOnlyDict<unknown[]>): number =>
  Object.values(group).reduce((sum, list) => sum + (list?.length ?? 0), 0);

/** A client with virtual time, captured logs, its own metrics registry and fast test-sized limits. */
export function makeClient(
  baseUrl: string,
  apiKey: string,
  overrides: Partial<UpstreamOptions> = {},
): TestClient {
  const clock = virtualClock();
  const logs = captureLogger();
  const metrics = new MetricsService();
  const options = resolveUpstreamOptions({
    baseUrl,
    apiKey,
    environment: 'sandbox',
    clock,
    logger: logs,
    random: () => 0.5,
    timeouts: { readMs: 2_000, signMs: 2_000, submitMs: 2_000, deadlineMs: 20_000 },
    retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000, retryAfterCapMs: 5_000 },
    breaker: { consecutiveFailures: 50, halfOpenAfterMs: 60_000 },
    ...overrides,
  });
  // The same HttpService the client would build itself, kept here to look at its socket pool.
  const http = createUpstreamHttpService(options);
  const client = UpstreamClient.create(options, metrics, http);
  const agent = agentOf(http);
  return {
    client,
    clock,
    logs,
    metrics,
    connectionStats: () => ({ inUse: count(agent.sockets), idle: count(agent.freeSockets) }),
    ratePerSecond: async () => {
      const gauge = metrics.registry.getSingleMetric('upstream_rate_limit_per_second');
      return (await gauge?.get())?.values[0]?.value ?? Number.NaN;
    },
  };
}

export type StubHandler = (req: IncomingMessage, res: ServerResponse, body: string, hit: number) => void;

export interface StubServer {
  url: string;
  hits: { method: string; url: string; headers: IncomingMessage['headers']; body: string; socket: Socket }[];
  openConnections(): number;
  close(): Promise<void>;
}

/** A tiny loopback HTTP server whose handler decides every answer; records every request it sees. */
export async function startStub(handler: StubHandler): Promise<StubServer> {
  const hits: StubServer['hits'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      hits.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        socket: req.socket,
      });
      handler(req, res, body, hits.length);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    openConnections: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

/** Runs `fn`, which must fail with an UpstreamError, and returns that error. */
export async function failure(fn: () => Promise<unknown>): Promise<UpstreamError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError');
}

/** A clock that never moves (ties between "a 401 was seen" and "the verdict was taken" are certain). */
export function frozenClock(atMs = 1_000_000): UpstreamClock {
  return { now: () => atMs, sleep: async () => undefined };
}

/** A fake key: it must appear in no log line, error or metric. */
export const CANARY = 'trk_test_CANARY_s3cr3t_do_not_leak_0001';
export const SIGNED_TX = 'AQ' + 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo'.repeat(4) + '==';
/** A valid signed-transaction response (contract 2.3). */
export const signedBody = {
  custodialTransactionId: 'ab'.repeat(32),
  signerAddress: 'Signer1111',
  feePayerAddress: 'Payer1111',
  signedTransaction: SIGNED_TX,
  message: 'AQID',
  signature: 'sig1111',
  feePayerSignature: 'sig2222',
  requiredSigners: ['Signer1111', 'Payer1111'],
  recentBlockhash: 'hash1111',
};
export const cancel = {
  instruction: 'cancel_listing_v1' as const,
  params: [{ event_id: 18446744073709551615n, ticket_id: 9007199254740993n, canceller: 'Signer1111' }],
};

/**
 * Stub servers and clients for one spec file, all closed after each test. `client` uses CANARY as the key
 * unless told otherwise.
 */
export function stubHarness(): {
  stub: (handler: StubHandler) => Promise<StubServer>;
  client: (server: StubServer, overrides?: Partial<UpstreamOptions>, key?: string) => TestClient;
} {
  const servers: StubServer[] = [];
  const clients: UpstreamClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return {
    stub: async (handler) => {
      const server = await startStub(handler);
      servers.push(server);
      return server;
    },
    client: (server, overrides = {}, key = CANARY) => {
      const t = makeClient(server.url, key, overrides);
      clients.push(t.client);
      return t;
    },
  };
}
