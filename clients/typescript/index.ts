import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { IDEMPOTENT_OPERATIONS, type paths } from './schema';

export type { components, operations, paths } from './schema';

/** An operation with the `Idempotency-Key` header made optional: the client sets a fresh one when absent. */
type KeyOptional<Op> = Op extends { parameters: { header: { 'Idempotency-Key': string } } }
  ? Omit<Op, 'parameters'> & {
      parameters: Omit<Op['parameters'], 'header'> & {
        header?: Omit<Op['parameters']['header'], 'Idempotency-Key'> & { 'Idempotency-Key'?: string };
      };
    }
  : Op;

/** The service's paths as the client takes them (`Idempotency-Key` optional, see `KeyOptional`). */
export type MarketplacePaths = { [P in keyof paths]: { [M in keyof paths[P]]: KeyOptional<paths[P][M]> } };

/** A typed client: `client.GET('/v1/listings', { params: { query } })`, `client.POST('/v1/orders', …)`. */
export type MarketplaceClient = Client<MarketplacePaths>;

export interface MarketplaceClientOptions {
  /** The service's origin, e.g. `http://127.0.0.1:3000` (paths start with `/v1`). */
  baseUrl: string;
  /** An API key (`trb_live_…`), sent as `Authorization: Bearer <key>` on every request. */
  apiKey: string;
  /** The fetch to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries after the first attempt on a 5xx or a network error (default 3; 0 turns retrying off). */
  retries?: number;
  /** Backoff before retry n: a random delay up to min(max, base × 2^n) (full jitter). Default 200 ms. */
  retryBaseDelayMs?: number;
  /** The longest wait before a retry, `Retry-After` included (default 10 s). */
  retryMaxDelayMs?: number;
  /** Seams for tests and custom schedulers: how to wait, the jitter source, how to make a fresh key. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  newIdempotencyKey?: () => string;
}

/** Methods that are safe to send again without a key (RFC 9110 idempotent methods). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** `<METHOD> <schema path>` of the operations the service deduplicates by `Idempotency-Key` (generated). */
const KEYED = new Set(IDEMPOTENT_OPERATIONS);

/**
 * The typed client of the marketplace's backend. Every request carries the key; the operations that take an
 * `Idempotency-Key` get the caller's (`params.header['Idempotency-Key']`) or a fresh UUID; a request that
 * answers 5xx or fails on the network is sent again with the SAME key (bounded, backoff with jitter, honouring
 * `Retry-After`), so a retried purchase is still one purchase. 4xx answers are never retried. A POST (or PATCH)
 * is retried only when its operation is one of IDEMPOTENT_OPERATIONS: an `Idempotency-Key` the caller sets on
 * any other operation is sent but the service does not deduplicate by it, so a second send could act twice.
 */
export function createMarketplaceClient(options: MarketplaceClientOptions): MarketplaceClient {
  const newKey = options.newIdempotencyKey ?? (() => globalThis.crypto.randomUUID());
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  // Requests of IDEMPOTENT_OPERATIONS, marked by the middleware (it alone knows the schema path) for the
  // retrying fetch. Nothing goes on the wire; a Request replaced by a later middleware of the caller's is
  // unmarked, so it is not retried (never retried by mistake).
  const keyed = new WeakSet<Request>();
  const client = createClient<MarketplacePaths>({
    baseUrl: options.baseUrl,
    fetch: retrying(send, keyed, {
      retries: options.retries ?? 3,
      baseDelayMs: options.retryBaseDelayMs ?? 200,
      maxDelayMs: options.retryMaxDelayMs ?? 10_000,
      sleep: options.sleep ?? ((ms) => new Promise((done) => setTimeout(done, ms))),
      random: options.random ?? Math.random,
    }),
  });
  const headers: Middleware = {
    onRequest({ request, schemaPath }) {
      request.headers.set('authorization', `Bearer ${options.apiKey}`);
      if (!KEYED.has(`${request.method} ${schemaPath}`)) return request;
      if (!request.headers.has('idempotency-key')) request.headers.set('idempotency-key', newKey());
      keyed.add(request);
      return request;
    },
  };
  client.use(headers);
  return client;
}

interface RetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

/**
 * A fetch that sends a retryable request again on 5xx and network errors, each time the same bytes. Retryable:
 * an idempotent method, or a request of a keyed operation (`keyed`) — never the mere presence of a key.
 */
function retrying(
  send: (request: Request) => Promise<Response>,
  keyed: WeakSet<Request>,
  policy: RetryPolicy,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const retryable = IDEMPOTENT_METHODS.has(request.method) || keyed.has(request);
    const attempts = retryable ? Math.max(0, Math.floor(policy.retries)) + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts;
      // A body can be read once: every attempt but the last sends a copy.
      const sent = last ? request : request.clone();
      let wait: number;
      try {
        const response = await send(sent);
        if (response.status < 500 || last) return response;
        await response.body?.cancel();
        wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt, policy);
      } catch (error) {
        if (last || request.signal.aborted) throw error;
        wait = backoffMs(attempt, policy);
      }
      await policy.sleep(Math.min(wait, policy.maxDelayMs));
    }
  };
}

/** Full jitter: uniformly random up to min(max, base × 2^(attempt-1)). */
function backoffMs(attempt: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(policy.random() * ceiling);
}

/** `Retry-After` as delay-seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
