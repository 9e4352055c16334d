import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ErrorBody } from './all-exceptions.filter';
import { ERROR_HTTP_STATUS, type ErrorCode } from './app-error';
import { REQUEST_ID_HEADER } from './request-id';
import { SECURITY_HEADERS } from './security-headers';

/**
 * Answers the service gives before (or outside) Fastify's request lifecycle, where neither the global
 * filter nor the hooks of app.factory.ts run: HTTP the parser cannot read, requests that time out, URLs
 * the router cannot decode. Each still gets the error shape, a request id, the security headers, one
 * `request completed` log line and one `http_request_duration_seconds` sample (route `unmatched`).
 */
export interface BareAnswerSink {
  logger: Logger;
  /** Set once the Nest app (and its MetricsService) exists; answers before that are only logged. */
  metrics?: { observeHttp(method: string, route: string, status: number, seconds: number): void };
}

function bodyFor(code: ErrorCode, message: string, requestId: string): string {
  const body: ErrorBody = { error: { code, message, requestId } };
  return JSON.stringify(body);
}

function record(
  sink: BareAnswerSink,
  fields: { requestId: string; method: string; status: number; reason: string },
): void {
  sink.metrics?.observeHttp(fields.method, 'unmatched', fields.status, 0);
  sink.logger.info(
    {
      requestId: fields.requestId,
      method: fields.method,
      route: 'unmatched',
      status: fields.status,
      reason: fields.reason,
    },
    'request completed',
  );
}

/** Node's `clientError` codes the service answers with their own status (anything else is a 400). */
const CLIENT_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'HEADERS_TOO_LARGE', message: 'Request headers are too large' },
  // requestTimeout / headersTimeout of the HTTP server (HTTP_REQUEST_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS).
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 'REQUEST_TIMEOUT',
    message: 'The request did not arrive completely in time',
  },
};

/** Fastify's `clientErrorHandler`: the parser failed or the request timed out; write the answer raw. */
export function createClientErrorHandler(
  sink: BareAnswerSink,
): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // A response already started on this socket cannot be replaced by another one. Node keeps the
    // socket's current response there (as its own default clientError handler reads it).
    // oxlint-disable-next-line no-underscore-dangle
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || error.code === 'ECONNRESET' || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const known = (error.code && CLIENT_ERRORS[error.code]) || undefined;
    const code = known?.code ?? 'BAD_REQUEST';
    const status = ERROR_HTTP_STATUS[code];
    const requestId = randomUUID();
    const body = bodyFor(code, known?.message ?? 'Malformed HTTP request', requestId);
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
      [REQUEST_ID_HEADER]: requestId,
      ...SECURITY_HEADERS,
    };
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
    record(sink, { requestId, method: 'UNKNOWN', status, reason: error.code ?? 'client_error' });
  };
}

/**
 * Longest path parameter the router accepts (Fastify's `maxParamLength`); longer is a 414. Our ids are
 * u64 decimals (≤ 20 characters) and UUIDs (36).
 */
export const MAX_PARAM_LENGTH = 100;

const FRAMEWORK_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  // The path is never echoed: callers put ids and, by mistake, keys in paths.
  FST_ERR_BAD_URL: { code: 'BAD_REQUEST', message: 'The request path is not valid percent-encoding' },
  FST_ERR_MAX_PARAM_LENGTH: {
    code: 'URI_TOO_LONG',
    message: `A path parameter is longer than ${MAX_PARAM_LENGTH} characters`,
  },
};

/** Fastify's `frameworkErrors`: the router could not decode or match the URL, before any hook ran. */
export function createFrameworkErrorHandler(
  sink: BareAnswerSink,
): (error: { code?: string }, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    const known = (error.code && FRAMEWORK_ERRORS[error.code]) || undefined;
    const code = known?.code ?? 'INTERNAL';
    const status = ERROR_HTTP_STATUS[code];
    const message = known?.message ?? 'Internal server error';
    void reply
      .code(status)
      .headers({ ...SECURITY_HEADERS, [REQUEST_ID_HEADER]: request.id })
      .header('content-type', 'application/json; charset=utf-8')
      .send(bodyFor(code, message, request.id));
    record(sink, {
      requestId: request.id,
      method: request.method,
      status,
      reason: error.code ?? 'framework',
    });
  };
}
