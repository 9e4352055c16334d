import { describe, expect, it } from 'vitest';
import { UpstreamConfig, loadUpstreamConfig } from './upstream.config';
import { configProblems } from './validate-env';

const problemsOf = (env: NodeJS.ProcessEnv): readonly string[] =>
  configProblems(() => loadUpstreamConfig(env));

describe(UpstreamConfig.name, () => {
  it('defaults to the in-process sandbox with documented values', () => {
    const sut = loadUpstreamConfig({});
    expect(sut.usesInProcessSandbox).toBe(true);
    expect(sut.UPSTREAM_ENVIRONMENT).toBe('sandbox');
    expect(sut.UPSTREAM_ACTIVE_LISTINGS_PATH).toBe('/indexer/listings/active');
    expect(sut.UPSTREAM_PROTOCOL_CONFIG_PATH).toBe('/indexer/protocol-config');
    expect(sut.UPSTREAM_PURCHASE_STATUS_KEY_PARAM).toBe('idempotency-key');
    expect(sut.UPSTREAM_MAX_ATTEMPTS).toBe(4);
  });

  it('refuses production without a key, naming UPSTREAM_API_KEY, never echoing values', () => {
    const problems = problemsOf({
      UPSTREAM_ENVIRONMENT: 'production',
      UPSTREAM_BASE_URL: 'https://api.example',
    });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['UPSTREAM_API_KEY']);
  });

  it('refuses production without a base URL or over plain http to a remote host', () => {
    expect(problemsOf({ UPSTREAM_ENVIRONMENT: 'production', UPSTREAM_API_KEY: 'k' })[0]).toMatch(
      /^UPSTREAM_BASE_URL:/,
    );
    expect(
      problemsOf({
        UPSTREAM_ENVIRONMENT: 'production',
        UPSTREAM_API_KEY: 'k',
        UPSTREAM_BASE_URL: 'http://api.example',
      })[0],
    ).toMatch(/^UPSTREAM_BASE_URL:/);
    expect(
      problemsOf({
        UPSTREAM_ENVIRONMENT: 'production',
        UPSTREAM_API_KEY: 'k',
        UPSTREAM_BASE_URL: 'http://127.0.0.1:4010',
      }),
    ).toEqual([]);
  });

  it('requires a key when a base URL is set', () => {
    expect(problemsOf({ UPSTREAM_BASE_URL: 'http://127.0.0.1:4010' })[0]).toMatch(/^UPSTREAM_API_KEY:/);
  });

  it('lists every bad variable and never echoes the key', () => {
    const problems = problemsOf({
      UPSTREAM_API_KEY: 'secret value with spaces',
      UPSTREAM_MAX_ATTEMPTS: '0',
      UPSTREAM_ENVIRONMENT: 'staging',
      UPSTREAM_ACTIVE_LISTINGS_PATH: 'no-slash',
    });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'UPSTREAM_ACTIVE_LISTINGS_PATH',
      'UPSTREAM_API_KEY',
      'UPSTREAM_ENVIRONMENT',
      'UPSTREAM_MAX_ATTEMPTS',
    ]);
    expect(problems.join('\n')).not.toContain('secret value');
  });
});
