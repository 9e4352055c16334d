import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FaultPlan } from '../faults/injector';
import type { FaultRule, SandboxOperation } from '../faults/model';
import type { Permission } from './auth';
import type { SandboxCore } from '../sandbox.core';
import { dropConnection, sendReply, UnreadableBody, type PendingWaits } from './io';
import { emptyReply, problemReply, textReply, type SandboxReply } from './reply';

export interface OperationContext {
  apiKeyName: string;
  plan: FaultPlan;
}

export interface OperationSpec {
  method: 'GET' | 'POST';
  url: string;
  operation: SandboxOperation;
  permission: Permission;
  /** Handlers are synchronous on purpose: no await between the idempotency check and the insert. */
  handle(request: FastifyRequest, context: OperationContext): SandboxReply;
}

/** 401 bodies differ by cause, as the contract warns they may (part 7). */
const UNAUTHORIZED: Record<'missing' | 'invalid' | 'other_environment', SandboxReply> = {
  missing: problemReply(401, 'unauthorized', 'missing x-api-key header'),
  other_environment: textReply(401, 'API key belongs to another environment'),
  invalid: emptyReply(401),
};

function faultReply(rule: FaultRule, operation: SandboxOperation): SandboxReply {
  if (rule.kind === 'rate_limit') {
    const seconds = rule.retryAfterSeconds ?? 1;
    const format = rule.retryAfter ?? 'seconds';
    const headers: Record<string, string> = {};
    if (format === 'seconds') headers['retry-after'] = String(seconds);
    // An HTTP date is read against the caller's wall clock, so it uses real time, not the sandbox clock.
    if (format === 'http-date') headers['retry-after'] = new Date(Date.now() + seconds * 1000).toUTCString();
    const body = rule.body ?? 'text';
    const base =
      body === 'json'
        ? problemReply(429, 'rate_limited', 'slow down')
        : body === 'text'
          ? textReply(429, 'Too Many Requests')
          : emptyReply(429);
    return { ...base, headers };
  }
  if (rule.kind === 'malformed_json') {
    const start =
      operation === 'events' || operation === 'listings' ? '{"items":[{"event_id":"1' : '{"status":"proc';
    return { kind: 'json', status: 200, body: start };
  }
  const status = rule.status ?? 503;
  const body = rule.body ?? 'json';
  if (body === 'json') return problemReply(status, 'injected_fault', 'the sandbox injected this failure');
  return body === 'text' ? textReply(status, 'Service Unavailable (injected)') : emptyReply(status);
}

/** Who a request authenticated as; set by the onRequest hook, read by the handler. */
const callers = new WeakMap<FastifyRequest, string>();

/** The API key's name when it may call an operation needing `permission`, otherwise the 401/403 reply. */
function authorize(
  core: SandboxCore,
  request: FastifyRequest,
  permission: Permission,
): string | SandboxReply {
  const auth = core.auth.authenticate(request.headers['x-api-key']);
  if (!auth.ok) return UNAUTHORIZED[auth.reason];
  if (!auth.permissions.includes(permission)) {
    return problemReply(403, 'forbidden', `this API key lacks the ${permission} permission`);
  }
  return auth.name;
}

/**
 * Registers one contract operation: authenticate and check the permission (onRequest, so before the body is
 * read: a bad key gets 401, never 400/413/415), apply faults, run the handler, send. Faults come after
 * authentication so that unauthenticated calls never consume a one-shot fault.
 */
export function registerOperation(
  app: FastifyInstance,
  core: SandboxCore,
  waits: PendingWaits,
  spec: OperationSpec,
): void {
  app.route({
    method: spec.method,
    url: spec.url,
    onRequest: (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const caller = authorize(core, request, spec.permission);
      if (typeof caller === 'string') {
        callers.set(request, caller);
        done();
      } else sendReply(reply, caller);
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const apiKeyName = callers.get(request);
      if (apiKeyName === undefined) throw new Error('onRequest did not authenticate this request');
      const plan = core.faults.plan(spec.operation);
      if (plan.latencyMs > 0) await waits.delay(plan.latencyMs);
      if (waits.closed) return dropConnection(reply);
      const terminal = plan.terminal;
      if (terminal?.kind === 'hang') {
        // Never answer; the client gives up, or close() destroys the socket (forceCloseConnections).
        reply.hijack();
        return;
      }
      if (terminal?.kind === 'reset') return dropConnection(reply);
      if (terminal !== undefined) return sendReply(reply, faultReply(terminal, spec.operation));
      if (request.body instanceof UnreadableBody) {
        return sendReply(reply, problemReply(request.body.status, 'bad_request', request.body.message));
      }
      const result = spec.handle(request, { apiKeyName, plan });
      if (plan.responseLost) return dropConnection(reply);
      return sendReply(reply, result);
    },
  });
}
