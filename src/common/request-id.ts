import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The given request id when it is a safe token (it ends up in logs and outgoing headers), else a new one. */
export function safeRequestId(given: string | undefined): string {
  return given !== undefined && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Keeps a caller's `x-request-id` when it is a safe token, else makes one. */
export function requestIdFrom(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return safeRequestId(Array.isArray(given) ? given[0] : given);
}
