import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadAppConfig } from '../config/app.config';
import { createRootLogger, serializeError } from './logging';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('createRootLogger', () => {
  it('redacts secret headers and fields wherever they are logged', () => {
    const { lines, stream } = capture();
    const sut = createRootLogger(loadAppConfig({ LOG_REDACT_PATHS: 'order.buyerEmail' }), stream);
    sut.info({
      req: { headers: { authorization: 'Bearer canary-1', 'x-api-key': 'canary-2', cookie: 'canary-3' } },
      upstream: { headers: { 'x-api-key': 'canary-4' }, apiKey: 'canary-5' },
      order: { buyerEmail: 'canary-6' },
      password: 'canary-7',
    });
    expect(lines.join('')).not.toMatch(/canary-/);
    expect(lines.join('')).toContain('[REDACTED]');
  });

  it('serializes errors without their attached request config', () => {
    const error = Object.assign(new Error('request failed'), {
      code: 'ECONNRESET',
      config: { headers: { 'x-api-key': 'canary-8' } },
    });
    const serialized = serializeError(error);
    expect(serialized).toMatchObject({ type: 'Error', message: 'request failed', code: 'ECONNRESET' });
    expect(JSON.stringify(serialized)).not.toContain('canary-8');
  });
});
