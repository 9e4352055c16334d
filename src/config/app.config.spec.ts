import { describe, expect, it } from 'vitest';
import { AppConfig, loadAppConfig } from './app.config';
import { configProblems } from './validate-env';

const problemsOf = (env: NodeJS.ProcessEnv): readonly string[] => configProblems(() => loadAppConfig(env));

describe(AppConfig.name, () => {
  it('applies the documented defaults with an empty environment', () => {
    const sut = loadAppConfig({});
    expect(sut.PORT).toBe(3000);
    expect(sut.HOST).toBe('127.0.0.1');
    expect(sut.DATABASE_URL).toBeUndefined();
    expect(sut.DATA_DIR).toBe('.data');
    expect(sut.LOG_LEVEL).toBe('info');
    expect(sut.MIGRATIONS_RUN).toBe(true);
    expect(sut.docsEnabled).toBe(true);
  });

  it('parses typed values', () => {
    const sut = loadAppConfig({
      PORT: '8080',
      MIGRATIONS_RUN: 'false',
      LOG_REDACT_PATHS: 'a.b, c',
      NODE_ENV: 'production',
    });
    expect(sut.PORT).toBe(8080);
    expect(sut.MIGRATIONS_RUN).toBe(false);
    expect(sut.LOG_REDACT_PATHS).toEqual(['a.b', 'c']);
    expect(sut.docsEnabled).toBe(false);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '1.5'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['MIGRATIONS_RUN', 'maybe'],
    ['NODE_ENV', 'staging'],
  ])('rejects %s=%s and names the variable', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems.some((p) => p.startsWith(`${name}:`))).toBe(true);
  });

  it('lists every bad variable at once and never echoes a value', () => {
    const problems = problemsOf({ PORT: 'abc', LOG_LEVEL: 'loud', DATABASE_URL: 'secret-not-a-url' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['DATABASE_URL', 'LOG_LEVEL', 'PORT']);
    expect(problems.join('\n')).not.toContain('secret-not-a-url');
  });

  it("carries no variable it does not declare (other modules' secrets stay out)", () => {
    const sut = loadAppConfig({ UPSTREAM_API_KEY: 'canary-secret', PATH: '/bin' });
    expect(JSON.stringify(sut)).not.toContain('canary-secret');
    expect(Object.keys(sut)).not.toContain('PATH');
  });

  it('drains for 5 s within an 8 s shutdown by default', () => {
    const sut = loadAppConfig({});
    expect(sut.SHUTDOWN_DRAIN_DELAY_MS).toBe(5000);
    expect(sut.SHUTDOWN_TIMEOUT_MS).toBe(8000);
  });

  it('refuses a drain delay that leaves too little of the shutdown timeout for closing', () => {
    expect(problemsOf({ SHUTDOWN_TIMEOUT_MS: '8000', SHUTDOWN_DRAIN_DELAY_MS: '7001' })).toEqual([
      expect.stringMatching(/^SHUTDOWN_DRAIN_DELAY_MS: .*SHUTDOWN_TIMEOUT_MS/),
    ]);
    expect(problemsOf({ SHUTDOWN_TIMEOUT_MS: '8000', SHUTDOWN_DRAIN_DELAY_MS: '7000' })).toEqual([]);
    expect(problemsOf({ SHUTDOWN_TIMEOUT_MS: '1000', SHUTDOWN_DRAIN_DELAY_MS: '1' })).toEqual([
      expect.stringMatching(/^SHUTDOWN_DRAIN_DELAY_MS: /),
    ]);
    // No drain (the old behaviour): any timeout the variable allows still works.
    expect(problemsOf({ SHUTDOWN_TIMEOUT_MS: '100', SHUTDOWN_DRAIN_DELAY_MS: '0' })).toEqual([]);
  });

  it.each(['-1', '59001', 'soon'])('rejects SHUTDOWN_DRAIN_DELAY_MS=%s and names it', (value) => {
    expect(problemsOf({ SHUTDOWN_DRAIN_DELAY_MS: value })).toEqual([
      expect.stringMatching(/^SHUTDOWN_DRAIN_DELAY_MS: /),
    ]);
  });

  it('reports a bad drain delay and a bad replica cut-off together', () => {
    const problems = problemsOf({
      REPLICA_HEARTBEAT_MS: '1000',
      REPLICA_DEAD_AFTER_MS: '1999',
      SHUTDOWN_DRAIN_DELAY_MS: '8000',
    });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'REPLICA_DEAD_AFTER_MS',
      'SHUTDOWN_DRAIN_DELAY_MS',
    ]);
  });

  it('refuses a replica cut-off shorter than two heartbeats (one late beat must not drop a replica)', () => {
    expect(problemsOf({ REPLICA_HEARTBEAT_MS: '1000', REPLICA_DEAD_AFTER_MS: '1999' })).toEqual([
      expect.stringMatching(/^REPLICA_DEAD_AFTER_MS: /),
    ]);
    expect(problemsOf({ REPLICA_HEARTBEAT_MS: '200', REPLICA_DEAD_AFTER_MS: '1000' })).toEqual([]);
    const sut = loadAppConfig({});
    expect([sut.REPLICA_HEARTBEAT_MS, sut.REPLICA_DEAD_AFTER_MS]).toEqual([1000, 5000]);
  });

  it('treats empty values as unset', () => {
    expect(loadAppConfig({ PORT: '', DATABASE_URL: '' }).PORT).toBe(3000);
  });
});
