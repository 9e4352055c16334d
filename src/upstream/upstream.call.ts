import { encodeU64 } from './int.codec';
import { JsonParseError, parseJsonSafely } from './safe-json';
import { UpstreamError, safeExcerpt, type UpstreamOperation } from './upstream.error';
import type { CallKind, UpstreamHttp } from './upstream.http';
import type { ResolvedUpstreamOptions } from './upstream.options';
import { RequestShapeError, encodeComponent } from './upstream.requests';
import { ResponseShapeError } from './upstream.responses';
import type { UpstreamCallOptions } from './upstream.types';

export const EVENTS_PATH = '/indexer/events/upcoming';

/** One upstream call as the client describes it; path and body are built lazily (see UpstreamCaller). */
export interface UpstreamRequest<T> {
  operation: UpstreamOperation;
  kind: CallKind;
  method: 'GET' | 'POST';
  route: string;
  /** Built inside the call, so a refused input rejects the promise (REJECTED, 0 attempts). */
  path: string | (() => string);
  body?: string | (() => string);
  headers?: Record<string, string>;
  parse: (json: unknown) => T;
  /** Signing and submission responses carry signed bytes: no excerpt of them, ever. */
  sensitiveBody?: boolean;
  /** The status alone is the answer (key check): the body is not read. */
  ignoreBody?: boolean;
  maxAttempts?: number;
  deadlineMs?: number;
}

/** A query string, each name and value encoded exactly once; undefined values are left out. */
export function query(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    // Encoded exactly once; '+' and ' ' become %2B and %20, so an opaque cursor arrives byte-exact.
    .map(([k, v]) => `${encodeComponent(k, 'query name')}=${encodeComponent(String(v), k)}`);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/** The page size to send: the caller's or the configured default; a positive safe integer. */
export function pageLimit(limit: number | undefined, fallback: number): number {
  const value = limit ?? fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RequestShapeError('limit must be a positive integer');
  return value;
}

/** A u64 query parameter as canonical decimal text. */
export function u64Param(value: bigint, name: string): string {
  try {
    return encodeU64(value);
  } catch {
    throw new RequestShapeError(`${name} must be a u64 bigint`);
  }
}

/**
 * The pipeline every client method goes through: build the request (a RequestShapeError becomes REJECTED
 * with 0 attempts), send it with the policies (UpstreamHttp), parse the body without precision loss and
 * validate it (a ResponseShapeError or invalid JSON becomes BAD_RESPONSE with a safe excerpt).
 */
export class UpstreamCaller {
  constructor(
    private readonly options: ResolvedUpstreamOptions,
    private readonly http: UpstreamHttp,
  ) {}

  /** Builds (refusing bad input as REJECTED with 0 attempts), sends with policies, parses, validates. */
  async call<T>(options: UpstreamCallOptions, request: UpstreamRequest<T>): Promise<T> {
    let path: string;
    let body: string | undefined;
    try {
      path = typeof request.path === 'function' ? request.path() : request.path;
      body = typeof request.body === 'function' ? request.body() : request.body;
    } catch (error) {
      if (!(error instanceof RequestShapeError)) throw error;
      throw new UpstreamError({
        code: 'REJECTED',
        operation: request.operation,
        message: `request refused before sending: ${error.message}`,
        attempts: 0,
      });
    }
    const result = await this.http.execute({
      operation: request.operation,
      kind: request.kind,
      method: request.method,
      route: request.route,
      path,
      body,
      headers: request.headers,
      requestId: options.requestId,
      signal: options.signal,
      maxAttempts: request.maxAttempts,
      deadlineMs: request.deadlineMs,
    });
    if (request.ignoreBody === true) return request.parse(undefined);
    try {
      return request.parse(parseJsonSafely(result.body));
    } catch (error) {
      if (!(error instanceof ResponseShapeError) && !(error instanceof JsonParseError)) throw error;
      const excerpt =
        request.sensitiveBody === true ? undefined : safeExcerpt(result.body, [this.options.apiKey]);
      throw new UpstreamError({
        code: 'BAD_RESPONSE',
        operation: request.operation,
        message: error instanceof JsonParseError ? 'response is not valid JSON' : error.message,
        status: 200,
        attempts: result.attempts,
        // A signing/submission 200 we cannot read still happened upstream.
        outcomeUnknown: request.kind !== 'read',
        excerpt,
      });
    }
  }
}
