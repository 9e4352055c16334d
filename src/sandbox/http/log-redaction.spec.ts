import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sandboxLogger } from '../sandbox.server';
import { redactUrl } from './log-redaction';

describe(redactUrl.name, () => {
  it('hides the values of secret-looking parameters and of anything that looks like an API key', () => {
    expect(redactUrl('/indexer/events/upcoming?limit=5&x-api-key=trk_test_abc&cursor=c1')).toBe(
      '/indexer/events/upcoming?limit=5&x-api-key=[REDACTED]&cursor=c1',
    );
    expect(redactUrl('/a?access%5Ftoken=s3cret&q=trk_live_123')).toBe(
      '/a?access%5Ftoken=[REDACTED]&q=[REDACTED]',
    );
    expect(redactUrl('/a?Authorization=Bearer%20x')).toBe('/a?Authorization=[REDACTED]');
  });

  it('leaves URLs without secrets as they are', () => {
    expect(redactUrl('/indexer/listings/active?eventId=7&limit=100')).toBe(
      '/indexer/listings/active?eventId=7&limit=100',
    );
    expect(redactUrl('/health')).toBe('/health');
  });

  it('never lets an upstream key through, whatever the parameter is called', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z_]{1,12}$/),
        fc.stringMatching(/^[A-Za-z0-9]{4,20}$/),
        (name, rest) => {
          const secret = `trk_test_${rest}`;
          expect(redactUrl(`/p?${name}=${secret}&limit=1`)).not.toContain(secret);
        },
      ),
    );
  });
});

describe(sandboxLogger.name, () => {
  it('logs a request with its query secrets redacted and no headers at all', () => {
    const sut = sandboxLogger().serializers.req({
      method: 'GET',
      url: '/indexer/events/upcoming?x-api-key=trk_test_sandbox_full_access&limit=1',
      ip: '127.0.0.1',
    });
    expect(sut).toEqual({
      method: 'GET',
      url: '/indexer/events/upcoming?x-api-key=[REDACTED]&limit=1',
      remoteAddress: '127.0.0.1',
    });
  });
});
