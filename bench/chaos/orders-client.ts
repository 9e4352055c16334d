import { createHash } from 'node:crypto';
import { sleep } from './processes';
import type { ServiceReplica } from './service-replica';

/** Deterministic PRNG (mulberry32) seeded from a string: a chaos run replays its choices from CHAOS_SEED. */
export function seededRandom(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface OrderBody {
  buyer_subject: string;
  buyer_address: string;
  event_id: string;
  ticket_id: string;
  expected_price_minor: string;
}

export interface OrderView {
  id: string;
  idempotency_key: string;
  state: string;
  final: boolean;
  attempt: number;
  event_id: string;
  ticket_id: string;
  failure: { code: string; reason: string } | null;
  transaction: { custodial_transaction_id: string | null; transaction_signature: string | null } | null;
  created_at: string;
  final_at: string | null;
}

export interface PostOutcome {
  status: number;
  order: OrderView | null;
  replayed: boolean;
  /** Body of a refusal (4xx other than 429), for the report. */
  refusal: string | null;
}

/** One 5xx the run must not see (a 500, or a 5xx without Retry-After), for the report. */
export interface FiveXxSample {
  at: number;
  replica: string;
  request: string;
  status: number;
  /** The `x-request-id` the client sent: the replica's log lines for this request carry it. */
  requestId: string;
  body: string;
}

/**
 * Every answer the client got, retries included. A 503 with Retry-After (DATABASE_BUSY while PostgreSQL is
 * down, a replica draining) is allowed and retried; a 500 or any other 5xx is a service bug.
 */
export class HttpTally {
  requests = 0;
  networkErrors = 0;
  status500 = 0;
  unavailableWithRetryAfter = 0;
  /** 5xx other than 500 and 503-with-Retry-After: 502, 504, a 503 without Retry-After. */
  other5xx = 0;
  readonly byStatus = new Map<number, number>();
  readonly samples: FiveXxSample[] = [];

  seen(status: number, retryAfter: string | null, sample: () => FiveXxSample): void {
    this.requests++;
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    if (status < 500) return;
    if (status === 503 && retryAfter !== null && /^\d+$/.test(retryAfter)) {
      this.unavailableWithRetryAfter++;
      return;
    }
    if (status === 500) this.status500++;
    else this.other5xx++;
    if (this.samples.length < 10) this.samples.push(sample());
  }

  failed(): void {
    this.requests++;
    this.networkErrors++;
  }
}

const TRANSIENT = new Set([429, 500, 502, 503, 504]);
/** A client gives up on one request after this long and tries again (same key, maybe the other replica). */
const POST_TIMEOUT_MS = 5_000;
/** The longest Retry-After honoured; a longer one is treated as this. */
const RETRY_AFTER_CAP_MS = 5_000;

/** Retry-After in ms when it is delay-seconds, else null. */
function retryAfterMs(header: string | null): number | null {
  return header !== null && /^\d+$/.test(header) ? Math.min(RETRY_AFTER_CAP_MS, Number(header) * 1000) : null;
}

/**
 * The orders API as a client sees it during chaos: any replica may be dead, frozen or without its database,
 * so every call goes to a live replica and is retried (same Idempotency-Key) on a network error, a timeout,
 * 429 or 5xx within a bounded deadline, never sooner than a Retry-After says. Every answer is tallied.
 */
export class OrdersClient {
  readonly tally = new HttpTally();
  private requestSeq = 0;

  constructor(
    private readonly replicas: readonly ServiceReplica[],
    private readonly apiKey: string,
  ) {}

  private pick(preferred: number): ServiceReplica {
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(preferred + i) % this.replicas.length];
      if (replica.up) return replica;
    }
    return this.replicas[preferred % this.replicas.length];
  }

  /** One request to `replica`, tallied: status, Retry-After (ms) and body, or null on a network error. */
  private async send(
    replica: ServiceReplica,
    method: 'GET' | 'POST',
    path: string,
    init: { headers?: Record<string, string>; body?: string; timeoutMs: number },
  ): Promise<{ status: number; retryAfterMs: number | null; text: string; headers: Headers } | null> {
    const requestId = `chaos-r${++this.requestSeq}`;
    try {
      const request: RequestInit = {
        method,
        headers: { authorization: `Bearer ${this.apiKey}`, 'x-request-id': requestId, ...init.headers },
        signal: AbortSignal.timeout(init.timeoutMs),
      };
      if (init.body !== undefined) request.body = init.body;
      const res = await fetch(`${replica.url}${path}`, request);
      const text = await res.text();
      const retryAfter = res.headers.get('retry-after');
      this.tally.seen(res.status, retryAfter, () => ({
        at: Date.now(),
        replica: `${replica.name}#${replica.starts}`,
        request: `${method} ${path}`,
        status: res.status,
        requestId,
        body: text.slice(0, 300),
      }));
      return { status: res.status, retryAfterMs: retryAfterMs(retryAfter), text, headers: res.headers };
    } catch {
      // Connection refused/reset (the replica was killed) or timeout (frozen, or its database is down).
      this.tally.failed();
      return null;
    }
  }

  /** POST /v1/orders until a definite answer (202 or a 4xx refusal) or the deadline. */
  async post(key: string, body: OrderBody, preferred: number, deadlineMs = 60_000): Promise<PostOutcome> {
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const replica = this.pick(preferred + attempt);
      const res = await this.send(replica, 'POST', '/v1/orders', {
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        timeoutMs: POST_TIMEOUT_MS,
      });
      if (res?.status === 202)
        return {
          status: 202,
          order: JSON.parse(res.text) as OrderView,
          replayed: res.headers.get('idempotent-replayed') === 'true',
          refusal: null,
        };
      if (res && !TRANSIENT.has(res.status))
        return { status: res.status, order: null, replayed: false, refusal: res.text.slice(0, 300) };
      const backoff = Math.min(2_000, 100 * 2 ** Math.min(attempt, 5));
      await sleep(Math.max(backoff, res?.retryAfterMs ?? 0));
    }
    return { status: 0, order: null, replayed: false, refusal: 'no answer before the deadline' };
  }

  /** GET /v1/orders/{id}: the order, `null` on 404, `undefined` when no replica answered (transient). */
  async get(id: string, preferred: number, waitS = 0): Promise<OrderView | null | undefined> {
    const res = await this.send(
      this.pick(preferred),
      'GET',
      `/v1/orders/${id}${waitS > 0 ? `?wait=${waitS}s` : ''}`,
      { timeoutMs: waitS * 1000 + 10_000 },
    );
    if (res?.status === 200) return JSON.parse(res.text) as OrderView;
    if (res?.status === 404) return null;
    // Transient: the callers retry; a Retry-After is honoured here so they need not know it.
    if (res?.retryAfterMs) await sleep(res.retryAfterMs);
    return undefined;
  }

  /** GET with retries until a definite answer (200 or 404) or the deadline; `undefined` = never answered. */
  async getDefinite(
    id: string,
    preferred: number,
    deadlineMs = 30_000,
  ): Promise<OrderView | null | undefined> {
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const view = await this.get(id, preferred + attempt);
      if (view !== undefined) return view;
      await sleep(Math.min(1_000, 100 * 2 ** Math.min(attempt, 4)));
    }
    return undefined;
  }

  /**
   * GET `path` (JSON) with retries on any replica until a definite answer (a status below 500 other than 429) or
   * the deadline: the status and parsed body, or null when no replica answered.
   */
  async getJson(
    path: string,
    preferred: number,
    deadlineMs = 30_000,
  ): Promise<{ status: number; body: unknown } | null> {
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const res = await this.send(this.pick(preferred + attempt), 'GET', path, { timeoutMs: 10_000 });
      if (res && !TRANSIENT.has(res.status))
        return { status: res.status, body: JSON.parse(res.text) as unknown };
      await sleep(Math.max(Math.min(1_000, 100 * 2 ** Math.min(attempt, 4)), res?.retryAfterMs ?? 0));
    }
    return null;
  }

  /** Long-polls the order until it is final or the deadline passes; the last view seen (or undefined). */
  async waitFinal(id: string, preferred: number, deadlineMs: number): Promise<OrderView | undefined> {
    const deadline = Date.now() + deadlineMs;
    let last: OrderView | undefined;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const waitS = Math.max(1, Math.min(5, Math.floor((deadline - Date.now()) / 1000)));
      const view = await this.get(id, preferred + attempt, waitS);
      if (view) {
        last = view;
        if (view.final) return view;
      } else {
        await sleep(200);
      }
    }
    return last;
  }
}

/** Nearest-rank percentile of `values` (ms). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
