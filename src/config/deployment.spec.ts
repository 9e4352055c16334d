import { describe, expect, it } from 'vitest';
import { isLocalDemo, isLoopbackHost } from './deployment';

describe('isLocalDemo', () => {
  it('is the zero-config start: loopback HOST (default), in-process sandbox, NODE_ENV not production', () => {
    expect(isLocalDemo({})).toBe(true);
    expect(isLocalDemo({ NODE_ENV: 'development', HOST: '127.0.0.1' })).toBe(true);
    expect(isLocalDemo({ NODE_ENV: 'test', HOST: '[::1]', UPSTREAM_BASE_URL: '' })).toBe(true);
  });

  it.each([
    ['NODE_ENV=production', { NODE_ENV: 'production' }],
    ['a real upstream', { UPSTREAM_BASE_URL: 'https://api.example.com' }],
    [
      'an upstream on loopback (a sandbox process or a sidecar: the process cannot tell)',
      { UPSTREAM_BASE_URL: 'http://127.0.0.1:4010' },
    ],
    ['a non-loopback HOST', { HOST: '0.0.0.0' }],
    ['a public HOST name', { HOST: 'bff.example.com' }],
  ])('is not with %s', (_name, env) => {
    expect(isLocalDemo(env)).toBe(false);
  });
});

describe('isLoopbackHost', () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]'])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each(['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '127.0.0.1.example.com', 'localhost.example.com'])(
    '%s is not',
    (host) => {
      expect(isLoopbackHost(host)).toBe(false);
    },
  );
});
