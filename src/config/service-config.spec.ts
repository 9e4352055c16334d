import { describe, expect, it } from 'vitest';
import { loadServiceConfig } from './service-config';
import { configProblems } from './validate-env';

const problemsOf = (env: NodeJS.ProcessEnv): readonly string[] =>
  configProblems(() => loadServiceConfig(env));
const names = (problems: readonly string[]) => problems.map((p) => p.split(':')[0]).sort();

const SECRETS = { API_KEY_PEPPER: 'p'.repeat(40), CURSOR_SECRET: 'c'.repeat(40) };

describe('loadServiceConfig', () => {
  it('needs nothing: embedded database and in-process sandbox defaults', () => {
    const sut = loadServiceConfig({});
    expect(sut.upstream.usesInProcessSandbox).toBe(true);
    expect(sut.app.DATABASE_URL).toBeUndefined();
  });

  it('reports the problems of every config class in one go', () => {
    expect(names(problemsOf({ PORT: 'abc', UPSTREAM_MAX_ATTEMPTS: '0', SANDBOX_EVENTS: '-1' }))).toEqual([
      'PORT',
      'SANDBOX_EVENTS',
      'UPSTREAM_MAX_ATTEMPTS',
    ]);
  });

  it('in production, names every missing upstream variable at the first start', () => {
    const problems = problemsOf({
      NODE_ENV: 'production',
      API_KEY_PEPPER: 'p'.repeat(40),
      CURSOR_SECRET: 'c'.repeat(40),
    });
    expect(names(problems)).toEqual(['UPSTREAM_API_KEY', 'UPSTREAM_BASE_URL']);
  });

  it('ignores SANDBOX_* when a real upstream is configured', () => {
    const sut = loadServiceConfig({
      ...SECRETS,
      UPSTREAM_BASE_URL: 'https://upstream.test',
      UPSTREAM_API_KEY: 'k'.repeat(20),
      SANDBOX_EVENTS: 'not-a-number',
    });
    expect(sut.sandbox).toEqual({});
  });

  it('states each problem once, even when several rules carry the same message', () => {
    const problems = problemsOf({ PORT: 'abc' });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.match(/PORT must be/g)).toHaveLength(1);
  });

  describe('outside the local demo (issue 31 item 2)', () => {
    const realUpstream = { UPSTREAM_BASE_URL: 'https://upstream.test', UPSTREAM_API_KEY: 'k'.repeat(20) };

    it.each([
      ['a real upstream and no NODE_ENV', realUpstream],
      ['a non-loopback HOST on the in-process sandbox', { HOST: '0.0.0.0' }],
      ['NODE_ENV=production', { NODE_ENV: 'production', ...realUpstream }],
    ])('%s: refuses to start without every secret, one line each, no value', (_name, env) => {
      const problems = problemsOf(env);
      expect(names(problems)).toEqual(['API_KEY_PEPPER', 'CURSOR_SECRET']);
      expect(problems.join('\n')).not.toContain('k'.repeat(20));
    });

    it('starts with the secrets, strict: docs, status page, /metrics, and private webhook targets off', () => {
      const sut = loadServiceConfig({ ...realUpstream, ...SECRETS });
      expect(sut.app.localDemo).toBe(false);
      expect(sut.app.docsEnabled).toBe(false);
      expect(sut.app.statusPageEnabled).toBe(false);
      expect(sut.auth.METRICS_PUBLIC).toBe(false);
      expect(sut.webhooks.production).toBe(true);
      expect(sut.auth.pepper).toBe(SECRETS.API_KEY_PEPPER);
    });

    it('keeps each allowance as an explicit opt-in', () => {
      const sut = loadServiceConfig({
        ...realUpstream,
        ...SECRETS,
        DOCS_ENABLED: 'true',
        STATUS_PAGE_ENABLED: 'true',
        METRICS_PUBLIC: 'true',
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      });
      expect([sut.app.docsEnabled, sut.app.statusPageEnabled, sut.auth.METRICS_PUBLIC]).toEqual([
        true,
        true,
        true,
      ]);
      expect(sut.webhooks.production).toBe(false);
    });

    it('refuses WEBHOOKS_ALLOW_PRIVATE_TARGETS with NODE_ENV=production', () => {
      expect(
        names(
          problemsOf({
            NODE_ENV: 'production',
            ...realUpstream,
            ...SECRETS,
            WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
          }),
        ),
      ).toEqual(['WEBHOOKS_ALLOW_PRIVATE_TARGETS']);
    });

    it('the zero-config local demo (loopback HOST, in-process sandbox) still needs nothing and keeps its allowances', () => {
      for (const env of [{}, { HOST: 'localhost' }, { HOST: '::1' }, { NODE_ENV: 'test' }]) {
        const sut = loadServiceConfig(env);
        expect(sut.app.localDemo).toBe(true);
        expect([sut.app.docsEnabled, sut.app.statusPageEnabled, sut.auth.METRICS_PUBLIC]).toEqual([
          true,
          true,
          true,
        ]);
        expect(sut.webhooks.production).toBe(false);
      }
    });
  });
});
