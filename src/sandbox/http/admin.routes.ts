import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkFaultRules } from '../faults/model';
import {
  readAdminBody,
  readEventInput,
  readOwner,
  readSeedListing,
  type AdminInputError,
} from './admin.input';
import type { SandboxAdmin } from '../sandbox.admin';
import { sendReply, UnreadableBody } from './io';
import { RawJsonNumber } from './raw-json.parser';
import { LedgerError } from '../ledger/ledger';
import { ADMIN_KEY_HEADER } from '../sandbox.options';
import { jsonReply, problemReply, type SandboxReply } from './reply';
import { parseU64 } from '../chain/u64.codec';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
const big = (value: unknown): unknown => (typeof value === 'bigint' ? value.toString() : value);
const json = (status: number, value: unknown): SandboxReply =>
  jsonReply(status, JSON.parse(JSON.stringify(value, (_k, v: unknown) => big(v))));

const LEDGER_ERROR_REPLIES: Record<LedgerError['kind'], [number, string]> = {
  not_found: [404, 'not_found'],
  conflict: [409, 'conflict'],
  invalid: [400, 'bad_request'],
  balance_overflow: [422, 'balance_overflow'],
};

type AdminHandler = (request: FastifyRequest) => SandboxReply;
type AdminRoute = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, handle: AdminHandler) => void;

const params = (request: FastifyRequest): Record<string, string> => request.params as Record<string, string>;

/**
 * Admin and fault-control routes under /__sandbox, guarded by the x-sandbox-admin-key header. Not part of
 * the upstream contract; faults never apply here.
 */
export function registerAdminRoutes(app: FastifyInstance, admin: SandboxAdmin): void {
  const route = guardedRoute(app, admin.adminKey);
  registerLedgerRoutes(route, admin);
  registerFaultAndClockRoutes(route, admin);
}

/** Registers one admin route: the key check, unreadable bodies, and LedgerError / input errors as problems. */
function guardedRoute(app: FastifyInstance, adminKey: string): AdminRoute {
  const expected = digest(adminKey);
  return (method, url, handle) => {
    app.route({
      method,
      url: `/__sandbox${url}`,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const header = request.headers[ADMIN_KEY_HEADER];
        if (typeof header !== 'string' || !timingSafeEqual(digest(header), expected)) {
          return sendReply(
            reply,
            problemReply(401, 'unauthorized', `missing or wrong ${ADMIN_KEY_HEADER} header`),
          );
        }
        if (request.body instanceof UnreadableBody) {
          return sendReply(reply, problemReply(request.body.status, 'bad_request', request.body.message));
        }
        try {
          return sendReply(reply, handle(request));
        } catch (error) {
          if (error instanceof LedgerError) {
            const [status, name] = LEDGER_ERROR_REPLIES[error.kind];
            return sendReply(reply, problemReply(status, name, error.message));
          }
          if (isInputError(error)) return sendReply(reply, problemReply(400, 'bad_request', error.message));
          throw error;
        }
      },
    });
  };
}

/** State, wallets, events, tickets, listings and transactions of the simulated chain. */
function registerLedgerRoutes(route: AdminRoute, admin: SandboxAdmin): void {
  route('GET', '/state', () => json(200, admin.stats()));
  for (const [segment, kind] of [
    ['users', 'user'],
    ['integrators', 'integrator'],
  ] as const) {
    route('GET', `/wallets/${segment}/:subject`, (request) => {
      const ref = { kind, subject: params(request).subject };
      return json(200, { ...ref, address: admin.walletAddress(ref), balance_minor: admin.balance(ref) });
    });
    route('POST', `/wallets/${segment}/:subject/fund`, (request) => {
      const ref = { kind, subject: params(request).subject };
      const amount = parseU64(readAdminBody(request.body).amount_minor);
      if (!amount.ok) return problemReply(400, 'bad_request', `amount_minor ${amount.reason}`);
      return json(200, {
        ...ref,
        address: admin.walletAddress(ref),
        balance_minor: admin.fund(ref, amount.value),
      });
    });
  }
  route('POST', '/events', (request) =>
    json(201, admin.createEvent(readEventInput(readAdminBody(request.body)))),
  );
  route('POST', '/tickets', (request) => {
    const body = readAdminBody(request.body);
    const eventId = parseU64(body.event_id);
    const ticketId = body.ticket_id === undefined ? undefined : parseU64(body.ticket_id);
    if (!eventId.ok || (ticketId !== undefined && !ticketId.ok)) {
      return problemReply(400, 'bad_request', 'event_id and ticket_id must be u64 values');
    }
    const owner = readOwner(body.owner);
    return json(
      201,
      admin.mintTicket({
        eventId: eventId.value,
        ticketId: ticketId?.ok ? ticketId.value : undefined,
        owner,
      }),
    );
  });
  route('POST', '/listings', (request) =>
    json(201, admin.seedListing(readSeedListing(readAdminBody(request.body)))),
  );
  route('GET', '/tickets/:eventId/:ticketId', (request) => {
    const p = params(request);
    const [eventId, ticketId] = [parseU64(p.eventId), parseU64(p.ticketId)];
    if (!eventId.ok || !ticketId.ok)
      return problemReply(400, 'bad_request', 'ids must be u64 decimal strings');
    const ticket = admin.ticket(eventId.value, ticketId.value);
    if (ticket === undefined) return problemReply(404, 'not_found', 'no such ticket');
    return json(200, { ...ticket, listing: admin.listing(eventId.value, ticketId.value) ?? null });
  });
  route('GET', '/transactions', (request) => {
    const query = request.query as Record<string, unknown>;
    const pick = (name: string): string | undefined =>
      typeof query[name] === 'string' && query[name] !== '' ? query[name] : undefined;
    const items = admin.transactions({ instruction: pick('instruction'), state: pick('state') });
    return json(200, { items });
  });
  route('GET', '/transactions/:id', (request) => {
    const view = admin.transaction(params(request).id);
    return view === undefined ? problemReply(404, 'not_found', 'no such transaction') : json(200, view);
  });
}

/** Fault rules, the simulated clock and reset. */
function registerFaultAndClockRoutes(route: AdminRoute, admin: SandboxAdmin): void {
  route('GET', '/faults', () => json(200, { rules: admin.faults() }));
  route('PUT', '/faults', (request) => {
    const body = readAdminBody(request.body);
    const parsed = checkFaultRules(plainNumbers(body.rules));
    if (!parsed.ok) {
      const details = parsed.problems.map((p) => ({ path: `rules${p.path}`, message: p.message }));
      return problemReply(400, 'bad_request', 'invalid fault rules', details);
    }
    if (body.seed !== undefined && typeof body.seed !== 'string')
      return problemReply(400, 'bad_request', 'seed must be a string');
    admin.setFaults(parsed.rules, body.seed);
    return json(200, { rules: admin.faults() });
  });
  route('POST', '/faults', (request) => {
    const parsed = checkFaultRules([plainNumbers(readAdminBody(request.body))]);
    if (!parsed.ok) {
      // One rule: paths relative to the rule itself ("rate", not "[0].rate").
      const details = parsed.problems.map((p) => ({
        path: p.path.replace(/^\[0\]\.?/, ''),
        message: p.message,
      }));
      return problemReply(400, 'bad_request', 'invalid fault rule', details);
    }
    admin.addFault(parsed.rules[0]);
    return json(200, { rules: admin.faults() });
  });
  route('DELETE', '/faults', () => {
    admin.clearFaults();
    return json(200, { rules: [] });
  });
  route('POST', '/clock/advance', (request) => {
    const ms = readAdminBody(request.body).ms;
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) {
      return problemReply(400, 'bad_request', 'ms must be a non-negative integer');
    }
    const nowMs = admin.advanceTime(ms);
    return json(200, { now_ms: nowMs, now: new Date(nowMs).toISOString() });
  });
  route('POST', '/reset', () => {
    admin.reset();
    return json(200, admin.stats());
  });
}

/**
 * Fault rules carry no 64-bit values, so the raw parser's RawJsonNumber (kept for u64 precision elsewhere)
 * becomes a plain number here: a rate of 0.2 is a fraction, not a precision hazard. Depth is bounded by
 * the parser's nesting limit.
 */
function plainNumbers(value: unknown): unknown {
  if (value instanceof RawJsonNumber) return Number(value.text);
  if (Array.isArray(value)) return value.map(plainNumbers);
  if (typeof value === 'object' && value !== null) {
    const result = Object.create(null) as Record<string, unknown>;
    for (const [key, item] of Object.entries(value)) result[key] = plainNumbers(item);
    return result;
  }
  return value;
}

function isInputError(error: unknown): error is AdminInputError {
  return error instanceof Error && error.name === 'AdminInputError';
}
