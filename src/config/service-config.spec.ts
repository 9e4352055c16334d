import { describe, expect, it } from 'vitest';
import { loadServiceConfig } from './service-config';
import { configProblems } from './validate-env';

const problemsOf = (env: NodeJS.ProcessEnv): readonly string[] =>
  configProblems(() => loadServiceConfig(env));
const names = (problems: readonly string[]) => problems.map((p) => p.split(':')[0]).sort();

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
});
