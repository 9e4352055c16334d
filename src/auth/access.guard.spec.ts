import { Reflector } from '@nestjs/core';
import type { ExecutionContext } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../common/app-error';
import { loadAuthConfig } from '../config/auth.config';
import { Authenticated, Public, PublicIf, RequireScope } from './access.decorators';
import { AccessGuard } from './access.guard';
import { UNAUTHORIZED_MESSAGE } from './auth.errors';
import type { ApiKeyAuthenticator } from './api-key.authenticator';
import type { VerifyResult } from './api-clients.service';
import type { Scope } from './scopes';
import type { SubjectBinding } from './subject-binding';
import { FailedAuthLimiter } from './failed-auth.limiter';
import { SlidingWindowThrottlerStorage } from './sliding-window.storage';
import type { ReplicasService } from '../replicas/replicas.service';

class Routes {
  @Public() open(): void {}
  @Authenticated() me(): void {}
  @RequireScope('orders:write') checkout(): void {}
  @PublicIf('METRICS_PUBLIC', 'admin') metrics(): void {}
  @RequireScope('orders:write', { wallet: 'user', in: 'body', field: 'buyer_subject' }) buy(): void {}
  @RequireScope('transactions:write', { wallet: 'integrator', in: 'path', field: 'subject' }) sign(): void {}
  undeclared(): void {}
}

@RequireScope('catalog:read')
class ClassLevel {
  browse(): void {}
  @Public() ping(): void {}
}

interface FakeRequest {
  id: string;
  ip: string;
  headers: Record<string, string>;
  apiClient?: unknown;
  clientContext?: unknown;
  rateLimitBucket?: unknown;
  routeOptions: { url: string };
  params?: unknown;
  body?: unknown;
  /** Node's raw header list, as Fastify's `request.raw` carries it. */
  raw: { rawHeaders: string[] };
}

function contextFor(
  controller: object,
  method: string,
  headers: Record<string, string>,
  input: { params?: unknown; body?: unknown; ip?: string } = {},
) {
  const rawHeaders = Object.entries(headers).flat();
  const request: FakeRequest = {
    id: 'req-1',
    ip: '127.0.0.1',
    headers,
    routeOptions: { url: '/x' },
    raw: { rawHeaders },
    ...input,
  };
  const reply = { header: vi.fn<(name: string, value: string) => unknown>() };
  const ctx = {
    getHandler: () => (controller as { prototype: Record<string, unknown> }).prototype[method],
    getClass: () => controller,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ExecutionContext;
  return { ctx, request, reply };
}

function guard(result: VerifyResult | (() => VerifyResult), env: Record<string, string> = {}) {
  const authenticate = vi.fn<(key: string) => Promise<VerifyResult>>(async () =>
    typeof result === 'function' ? result() : result,
  );
  const sut = new AccessGuard(
    new Reflector(),
    { authenticate } as unknown as ApiKeyAuthenticator,
    loadAuthConfig({ NODE_ENV: 'test', ...env }),
    new FailedAuthLimiter(new SlidingWindowThrottlerStorage(), loadAuthConfig({ NODE_ENV: 'test', ...env }), {
      share: (budget: number) => budget,
    } as ReplicasService),
  );
  return { sut, authenticate };
}

const ok = (scopes: Scope[], binding: SubjectBinding | null = null): VerifyResult => ({
  ok: true,
  client: { id: 'c1', name: 'client one', scopes, binding },
});
const KEY = { authorization: 'Bearer trb_live_whatever' };
const from = (ip: string, headers: Record<string, string> = KEY) => contextFor(Routes, 'me', headers, { ip });
const buyer = (buyer_subject: unknown) => ({ body: { buyer_subject } });

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe(AccessGuard.name, () => {
  it('lets public routes through without looking at credentials', async () => {
    const { sut, authenticate } = guard(ok([]));
    expect(await sut.canActivate(contextFor(Routes, 'open', {}).ctx)).toBe(true);
    expect(await sut.canActivate(contextFor(ClassLevel, 'ping', {}).ctx)).toBe(true);
    expect(authenticate).not.toHaveBeenCalled();
  });

  it.each([
    ['no credentials', {}, 'missing'],
    ['non-Bearer scheme', { authorization: 'Basic abc' }, 'malformed'],
  ])('refuses %s with the one 401 before any lookup', async (_name, headers, _reason) => {
    const { sut, authenticate } = guard(ok(['admin']));
    const { ctx, reply } = contextFor(Routes, 'me', headers);
    const error = await rejection(sut.canActivate(ctx));
    expect([error.code, error.message, error.details]).toEqual([
      'UNAUTHORIZED',
      UNAUTHORIZED_MESSAGE,
      undefined,
    ]);
    expect(reply.header).toHaveBeenCalledWith('www-authenticate', 'Bearer');
    expect(authenticate).not.toHaveBeenCalled();
  });

  it.each(['malformed', 'unknown', 'revoked'] as const)(
    'refuses a %s key with the same 401',
    async (reason) => {
      const { sut } = guard({ ok: false, reason });
      const error = await rejection(sut.canActivate(contextFor(Routes, 'me', KEY).ctx));
      expect([error.code, error.message, error.details]).toEqual([
        'UNAUTHORIZED',
        UNAUTHORIZED_MESSAGE,
        undefined,
      ]);
    },
  );

  it('attaches the client (id and name for logs, context for handlers) and the rate-limit bucket', async () => {
    const { sut } = guard(ok(['orders:write']));
    const { ctx, request } = contextFor(Routes, 'checkout', KEY);
    expect(await sut.canActivate(ctx)).toBe(true);
    expect(request.apiClient).toEqual({ id: 'c1', name: 'client one' });
    expect(request.clientContext).toEqual({
      id: 'c1',
      name: 'client one',
      scopes: ['orders:write'],
      binding: null,
    });
    expect(request.rateLimitBucket).toBe('orders:write');
    const me = contextFor(Routes, 'me', KEY);
    await sut.canActivate(me.ctx);
    expect(me.request.rateLimitBucket).toBe('default');
  });

  it('403 names the missing scope; admin implies every scope; class-level scope applies', async () => {
    const reader = guard(ok(['catalog:read'])).sut;
    const error = await rejection(reader.canActivate(contextFor(Routes, 'checkout', KEY).ctx));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toContain('orders:write');
    expect(error.details).toEqual({ requiredScope: 'orders:write' });
    expect(await reader.canActivate(contextFor(ClassLevel, 'browse', KEY).ctx)).toBe(true);
    const admin = guard(ok(['admin'])).sut;
    expect(await admin.canActivate(contextFor(Routes, 'checkout', KEY).ctx)).toBe(true);
  });

  it('a bound key naming a subject outside its binding is 403 SUBJECT_NOT_ALLOWED naming the field, never the subject', async () => {
    const binding = { userSubjects: ['acme-*'], integratorSubjects: ['acme'] };
    const { sut } = guard(ok(['orders:write', 'transactions:write'], binding));
    const buy = await rejection(
      sut.canActivate(contextFor(Routes, 'buy', KEY, { body: { buyer_subject: 'mallory' } }).ctx),
    );
    expect([buy.code, buy.details]).toEqual(['SUBJECT_NOT_ALLOWED', { field: 'buyer_subject' }]);
    expect(buy.message).toContain('buyer_subject');
    expect(buy.message).not.toContain('mallory');
    const sign = await rejection(
      sut.canActivate(contextFor(Routes, 'sign', KEY, { params: { subject: 'acme-1' } }).ctx),
    );
    expect([sign.code, sign.details]).toEqual(['SUBJECT_NOT_ALLOWED', { field: 'subject' }]);
  });

  it('lets a bound key in for its subjects, and an unbound key for any; a mistyped subject is left to validation', async () => {
    const binding = { userSubjects: ['acme-*'], integratorSubjects: ['acme'] };
    const bound = guard(ok(['orders:write', 'transactions:write'], binding)).sut;
    expect(await bound.canActivate(contextFor(Routes, 'buy', KEY, buyer('acme-7')).ctx)).toBe(true);
    expect(
      await bound.canActivate(contextFor(Routes, 'sign', KEY, { params: { subject: 'acme' } }).ctx),
    ).toBe(true);
    // Not a string (or absent): the validation pipe, which runs after the guard, answers 400 naming it.
    for (const input of [buyer(42), buyer(['mallory']), { body: {} }, { body: 'text' }, {}])
      expect(await bound.canActivate(contextFor(Routes, 'buy', KEY, input).ctx)).toBe(true);
    // Routes that declare no subject are not affected by a binding.
    expect(await bound.canActivate(contextFor(Routes, 'checkout', KEY, buyer('mallory')).ctx)).toBe(true);
    const unbound = guard(ok(['orders:write'])).sut;
    expect(await unbound.canActivate(contextFor(Routes, 'buy', KEY, buyer('mallory')).ctx)).toBe(true);
  });

  it('fails closed on a route without a declaration: 401 without a key, 403 with one', async () => {
    const { sut } = guard(ok(['admin']));
    expect((await rejection(sut.canActivate(contextFor(Routes, 'undeclared', {}).ctx))).code).toBe(
      'UNAUTHORIZED',
    );
    expect((await rejection(sut.canActivate(contextFor(Routes, 'undeclared', KEY).ctx))).code).toBe(
      'FORBIDDEN',
    );
  });

  it('PublicIf follows its configuration switch', async () => {
    const open = guard(ok([])).sut;
    expect(await open.canActivate(contextFor(Routes, 'metrics', {}).ctx)).toBe(true);
    const closed = guard(ok(['catalog:read']), { METRICS_PUBLIC: 'false' }).sut;
    expect((await rejection(closed.canActivate(contextFor(Routes, 'metrics', {}).ctx))).code).toBe(
      'UNAUTHORIZED',
    );
    expect((await rejection(closed.canActivate(contextFor(Routes, 'metrics', KEY).ctx))).code).toBe(
      'FORBIDDEN',
    );
    const adminOnly = guard(ok(['admin']), { METRICS_PUBLIC: 'false' }).sut;
    expect(await adminOnly.canActivate(contextFor(Routes, 'metrics', KEY).ctx)).toBe(true);
  });

  it('throttles failed authentications per source address: past RATE_LIMIT_AUTH_FAILURES even a valid key is 429 with Retry-After (issue 31 item 4)', async () => {
    let outcome: VerifyResult = { ok: false, reason: 'unknown' };
    const { sut, authenticate } = guard(() => outcome, {
      RATE_LIMIT_AUTH_FAILURES: '3',
      RATE_LIMIT_WINDOW_MS: '60000',
    });
    for (let i = 0; i < 3; i++)
      expect((await rejection(sut.canActivate(from('10.0.0.1').ctx))).code).toBe('UNAUTHORIZED');
    // No credential at all is not a guess: it does not count, and it is refused like any other request.
    outcome = ok(['admin']);
    const blocked = from('10.0.0.1');
    const error = await rejection(sut.canActivate(blocked.ctx));
    expect([error.code, error.retryAfterSeconds]).toEqual(['RATE_LIMITED', 60]);
    const calls = authenticate.mock.calls.length;
    expect((await rejection(sut.canActivate(from('10.0.0.1', {}).ctx))).code).toBe('RATE_LIMITED');
    expect(authenticate.mock.calls.length).toBe(calls);
    // Another address has its own budget; missing keys never spend it.
    for (let i = 0; i < 5; i++)
      expect((await rejection(sut.canActivate(from('10.0.0.2', {}).ctx))).code).toBe('UNAUTHORIZED');
    expect(await sut.canActivate(from('10.0.0.2').ctx)).toBe(true);
  });
});
