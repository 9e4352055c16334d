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

const TRANSIENT = new Set([429, 500, 502, 503, 504]);

/**
 * The orders API as a client sees it during chaos: any replica may be dead, so every call goes to a live
 * replica and is retried (same Idempotency-Key) on a network error, 429 or 5xx, within a bounded deadline.
 */
export class OrdersClient {
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

  /** POST /v1/orders until a definite answer (202 or a 4xx refusal) or the deadline. */
  async post(key: string, body: OrderBody, preferred: number, deadlineMs = 60_000): Promise<PostOutcome> {
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const replica = this.pick(preferred + attempt);
      try {
        const res = await fetch(`${replica.url}/v1/orders`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${this.apiKey}`,
            'idempotency-key': key,
            'content-type': 'application/json',
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        if (res.status === 202)
          return {
            status: 202,
            order: JSON.parse(text) as OrderView,
            replayed: res.headers.get('idempotent-replayed') === 'true',
            refusal: null,
          };
        if (!TRANSIENT.has(res.status))
          return { status: res.status, order: null, replayed: false, refusal: text.slice(0, 300) };
      } catch {
        // Connection refused/reset (the replica was killed) or timeout: the same key again, maybe elsewhere.
      }
      await sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt, 5)));
    }
    return { status: 0, order: null, replayed: false, refusal: 'no answer before the deadline' };
  }

  /** GET /v1/orders/{id}: the order, `null` on 404, `undefined` when no replica answered (transient). */
  async get(id: string, preferred: number, waitS = 0): Promise<OrderView | null | undefined> {
    const replica = this.pick(preferred);
    try {
      const res = await fetch(`${replica.url}/v1/orders/${id}${waitS > 0 ? `?wait=${waitS}s` : ''}`, {
        headers: { authorization: `Bearer ${this.apiKey}` },
        signal: AbortSignal.timeout(waitS * 1000 + 10_000),
      });
      const text = await res.text();
      if (res.status === 200) return JSON.parse(text) as OrderView;
      if (res.status === 404) return null;
      return undefined;
    } catch {
      return undefined;
    }
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
