import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { upstreamToAppError } from './upstream-error.mapper';
import { UPSTREAM_ERROR_CODES, UpstreamError, codeForHttpStatus, safeExcerpt } from './upstream.error';

describe(UpstreamError.name, () => {
  it('decides the code from the HTTP status', () => {
    expect([401, 403, 404, 409, 429, 400, 422, 500, 503, 204, 302].map(codeForHttpStatus)).toEqual([
      'UNAUTHORIZED',
      'FORBIDDEN',
      'NOT_FOUND',
      'CONFLICT',
      'RATE_LIMITED',
      'REJECTED',
      'REJECTED',
      'UNAVAILABLE',
      'UNAVAILABLE',
      'BAD_RESPONSE',
      'BAD_RESPONSE',
    ]);
  });

  it('keeps secrets, URLs and long opaque runs out of excerpts', () => {
    const key = 'trk_live_canary_0123';
    const text = `bad key ${key} see https://claim.example/abc?t=1 tx ${'QUJD'.repeat(30)} end`;
    const excerpt = safeExcerpt(text, [key]) ?? '';
    expect(excerpt).not.toContain(key);
    expect(excerpt).not.toContain('claim.example');
    expect(excerpt).not.toContain('QUJDQUJD');
    expect(excerpt).toContain('[REDACTED]');
  });

  it('never lets a secret through, wherever it sits in the body', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (before, after) => {
        const key = 'k3y-Secret_Value';
        expect(safeExcerpt(`${before}${key}${after}`, [key]) ?? '').not.toContain(key);
      }),
    );
  });

  it('maps every code to an AppError with a fixed, safe message', () => {
    for (const code of UPSTREAM_ERROR_CODES) {
      const mapped = upstreamToAppError(
        new UpstreamError({
          code,
          operation: 'verifyKey',
          message: 'secret-detail',
          attempts: 1,
          excerpt: 'secret-detail',
        }),
      );
      expect(mapped.message).not.toContain('secret-detail');
    }
    const limited = upstreamToAppError(
      new UpstreamError({
        code: 'RATE_LIMITED',
        operation: 'listUpcomingEvents',
        message: 'm',
        attempts: 1,
        retryAfterMs: 2_500,
      }),
    );
    expect([limited.code, limited.httpStatus, limited.retryAfterSeconds]).toEqual([
      'SERVICE_UNAVAILABLE',
      503,
      3,
    ]);
    const timeout = upstreamToAppError(
      new UpstreamError({ code: 'TIMEOUT', operation: 'submitTransaction', message: 'm', attempts: 2 }),
    );
    expect([timeout.code, timeout.httpStatus]).toEqual(['UPSTREAM_TIMEOUT', 504]);
    const key = upstreamToAppError(
      new UpstreamError({ code: 'UNAUTHORIZED', operation: 'verifyKey', message: 'm', attempts: 1 }),
    );
    expect([key.code, key.httpStatus]).toEqual(['UPSTREAM_UNAVAILABLE', 502]);
  });
});
