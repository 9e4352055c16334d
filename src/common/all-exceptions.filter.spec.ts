import {
  BadRequestException,
  HttpException,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AllExceptionsFilter, resolveError, type ErrorTranslator } from './all-exceptions.filter';
import { AppError } from './app-error';

const routed = { method: 'GET', url: '/v1/x', routeOptions: { url: '/v1/x' } } as unknown as FastifyRequest;
const unrouted = { method: 'GET', url: '/nope?q=1', routeOptions: {} } as unknown as FastifyRequest;

describe(AllExceptionsFilter.name, () => {
  it('maps AppError codes to their status with details and retry-after', () => {
    const resolved = resolveError(new AppError('RATE_LIMITED', 'slow down', undefined, 3), routed);
    expect(resolved).toMatchObject({
      status: 429,
      code: 'RATE_LIMITED',
      message: 'slow down',
      retryAfterSeconds: 3,
    });
  });

  it('answers unknown routes without echoing the path (it may hold a key)', () => {
    const keyInPath = { ...unrouted, url: '/v1/keys/trb_live_secretsecret?x=1' } as unknown as FastifyRequest;
    expect(JSON.stringify(resolveError(new NotFoundException(), keyInPath))).not.toContain('secret');
    expect(resolveError(new NotFoundException(), unrouted)).toEqual({
      status: 404,
      code: 'NOT_FOUND',
      message: 'No GET route matches this path',
    });
  });

  it('keeps 4xx HttpException messages and codes by status', () => {
    expect(resolveError(new BadRequestException('limit too big'), routed)).toMatchObject({
      status: 400,
      code: 'BAD_REQUEST',
      message: 'limit too big',
    });
  });

  it('hides everything about a 500: driver text, SQL, stack', () => {
    const sqlError = Object.assign(new Error('relation "orders" does not exist at SELECT * FROM orders'), {
      stack: 'Error: at pg/lib/client.js',
    });
    for (const error of [sqlError, new HttpException('db password=hunter2', 500), 'boom', null]) {
      const resolved = resolveError(error, routed);
      expect(resolved).toEqual({ status: 500, code: 'INTERNAL', message: 'Internal server error' });
    }
  });

  it('keeps a failed readiness report as a 503 naming what is down', () => {
    const report = { status: 'error', info: {}, error: { upstream: { status: 'down' } }, details: {} };
    expect(resolveError(new ServiceUnavailableException(report), routed)).toEqual({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'Not ready: upstream down',
      details: report,
      retryAfterSeconds: 1,
    });
    // Any other 503 keeps its status but not its text.
    expect(resolveError(new ServiceUnavailableException('db at 10.0.0.1 down'), routed)).toEqual({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'Service temporarily unavailable',
      retryAfterSeconds: 1,
    });
  });

  it('never echoes a framework JSON parse message (it quotes the body)', () => {
    const parseError = {
      statusCode: 400,
      code: 'FST_ERR_CTP_INVALID_JSON',
      message: 'Unexpected token s in "secret"',
    };
    expect(resolveError(parseError, routed).message).not.toContain('secret');
    expect(resolveError({ statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }, routed)).toMatchObject({
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
    });
  });

  describe('with error translators (how app.factory.ts teaches it UpstreamError)', () => {
    class ModuleError extends Error {
      constructor(readonly kind: 'down' | 'busy') {
        super('module text with trb_live_secret');
      }
    }
    const translators: ErrorTranslator[] = [
      () => undefined,
      (e) =>
        e instanceof ModuleError
          ? e.kind === 'down'
            ? new AppError('UPSTREAM_UNAVAILABLE', 'down')
            : new AppError('SERVICE_UNAVAILABLE', 'busy', undefined, 7)
          : undefined,
    ];

    it('answers a translated error with its code, status and Retry-After instead of a 500', () => {
      expect(resolveError(new ModuleError('down'), routed, translators)).toEqual({
        status: 502,
        code: 'UPSTREAM_UNAVAILABLE',
        message: 'down',
        details: undefined,
        retryAfterSeconds: undefined,
      });
      expect(resolveError(new ModuleError('busy'), routed, translators)).toMatchObject({
        status: 503,
        retryAfterSeconds: 7,
      });
    });

    it('leaves errors no translator claims to the usual rules', () => {
      expect(resolveError(new Error('x'), routed, translators)).toMatchObject({
        status: 500,
        code: 'INTERNAL',
      });
      expect(resolveError(new ModuleError('down'), routed)).toMatchObject({ status: 500, code: 'INTERNAL' });
    });
  });
});
