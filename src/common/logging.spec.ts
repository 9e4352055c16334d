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

describe(createRootLogger.name, () => {
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

  it.each([
    ['a top-level x-api-key', { 'x-api-key': 'canary-a' }],
    ['a top-level cookie', { cookie: 'canary-b' }],
    ['a nested cookie', { request: { cookie: 'canary-c' } }],
    ['a nested x-api-key', { upstream: { 'x-api-key': 'canary-d' } }],
    ['a set-cookie header', { res: { headers: { 'set-cookie': 'canary-e' } } }],
    ['response headers', { response: { headers: { 'set-cookie': 'canary-f' } } }],
    ['an error next to headers', { err: new Error('boom'), headers: { authorization: 'canary-g' } }],
  ])('redacts %s', (_name, record) => {
    const { lines, stream } = capture();
    const sut = createRootLogger(loadAppConfig({}), stream);
    sut.error(record, 'logged');
    expect(lines.join('')).toContain('"msg":"logged"');
    expect(lines.join('')).not.toMatch(/canary-/);
  });

  it('redacts configured fields inside logged errors', () => {
    const { lines, stream } = capture();
    const sut = createRootLogger(loadAppConfig({ LOG_REDACT_PATHS: 'order.buyerEmail' }), stream);
    sut.error({ err: new Error('checkout failed'), order: { buyerEmail: 'canary-h' } }, 'logged');
    expect(lines.join('')).toContain('checkout failed');
    expect(lines.join('')).not.toMatch(/canary-/);
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
