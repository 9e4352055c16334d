import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { loadAppConfig } from '../config/app.config';
import { storage } from 'nestjs-pino/storage';
import { createRootLogger, LazyRequestLogStore, serializeError } from './logging';

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

describe(LazyRequestLogStore.name, () => {
  it('builds the request logger only when a line is logged, once, and every line carries the requestId', () => {
    const { lines, stream } = capture();
    const root = createRootLogger(loadAppConfig({ LOG_LEVEL: 'info' }), stream);
    const child = vi.spyOn(root, 'child');
    const sut = new LazyRequestLogStore(root, 'req-7');
    storage.run(sut, () => {
      expect(child).not.toHaveBeenCalled();
      storage.getStore()?.logger.info({ authorization: 'Bearer canary-z' }, 'inside');
      storage.getStore()?.logger.warn('again');
    });
    expect(child).toHaveBeenCalledTimes(1);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => [r.msg, r.requestId])).toEqual([
      ['inside', 'req-7'],
      ['again', 'req-7'],
    ]);
    expect(lines.join('')).not.toContain('canary-z');
  });

  it('takes a replacement logger (nestjs-pino assign)', () => {
    const { lines, stream } = capture();
    const root = createRootLogger(loadAppConfig({ LOG_LEVEL: 'info' }), stream);
    const sut = new LazyRequestLogStore(root, 'req-8');
    sut.logger = sut.logger.child({ extra: 1 });
    sut.logger.info('x');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ requestId: 'req-8', extra: 1 });
  });
});
