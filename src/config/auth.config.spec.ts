import { describe, expect, it } from 'vitest';
import { AuthConfig, DEVELOPMENT_API_KEY_PEPPER, derivedCursorSecret, loadAuthConfig } from './auth.config';
import { configProblems } from './validate-env';

const problemsOf = (env: NodeJS.ProcessEnv): readonly string[] => configProblems(() => loadAuthConfig(env));

describe(AuthConfig.name, () => {
  it('applies the documented defaults', () => {
    const sut = loadAuthConfig({});
    expect(sut).toMatchObject({
      API_KEY_CACHE_TTL_MS: 2000,
      METRICS_PUBLIC: true,
      RATE_LIMIT_WINDOW_MS: 60_000,
      RATE_LIMIT_DEFAULT: 600,
      RATE_LIMIT_CATALOG_READ: 1200,
      RATE_LIMIT_LISTINGS_WRITE: 120,
      RATE_LIMIT_ORDERS_WRITE: 60,
      RATE_LIMIT_TRANSACTIONS_WRITE: 120,
      RATE_LIMIT_ADMIN: 120,
      pepper: DEVELOPMENT_API_KEY_PEPPER,
    });
    expect(sut.BFF_BOOTSTRAP_API_KEY).toBeUndefined();
  });

  it('refuses a per-window budget the in-memory throttler store cannot hold', () => {
    expect(problemsOf({ RATE_LIMIT_CATALOG_READ: '100000' })).toEqual([]);
    expect(problemsOf({ RATE_LIMIT_CATALOG_READ: '100001' })).toEqual([
      expect.stringMatching(/^RATE_LIMIT_CATALOG_READ:/),
    ]);
  });

  it('requires a real pepper in production, and never echoes it', () => {
    const production = { NODE_ENV: 'production', CURSOR_SECRET: 'c'.repeat(32) };
    expect(problemsOf({ ...production })).toEqual([expect.stringMatching(/^API_KEY_PEPPER:/)]);
    const short = problemsOf({ ...production, API_KEY_PEPPER: 'too-short-secret' });
    expect(short).toEqual([expect.stringMatching(/^API_KEY_PEPPER:/)]);
    expect(short.join()).not.toContain('too-short-secret');
    expect(loadAuthConfig({ ...production, API_KEY_PEPPER: 'x'.repeat(32) }).pepper).toBe('x'.repeat(32));
  });

  it('requires CURSOR_SECRET in production; elsewhere derives one from the pepper', () => {
    const pepper = { API_KEY_PEPPER: 'p'.repeat(40) };
    expect(problemsOf({ NODE_ENV: 'production', ...pepper })).toEqual([
      expect.stringMatching(/^CURSOR_SECRET:/),
    ]);
    const short = problemsOf({ NODE_ENV: 'production', ...pepper, CURSOR_SECRET: 'short-cursor-key' });
    expect(short).toEqual([expect.stringMatching(/^CURSOR_SECRET:/)]);
    expect(short.join()).not.toContain('short-cursor-key');
    const secret = 'c'.repeat(32);
    expect(loadAuthConfig({ NODE_ENV: 'production', ...pepper, CURSOR_SECRET: secret }).cursorSecret).toBe(
      secret,
    );
    // Two replicas sharing a pepper agree; another pepper gives another secret, never the pepper itself.
    const a = loadAuthConfig(pepper).cursorSecret;
    expect(a).toBe(loadAuthConfig(pepper).cursorSecret);
    expect(a).toHaveLength(64);
    expect(a).not.toBe(pepper.API_KEY_PEPPER);
    expect(loadAuthConfig({}).cursorSecret).toBe(derivedCursorSecret(DEVELOPMENT_API_KEY_PEPPER));
    expect(loadAuthConfig({}).cursorSecret).not.toBe(a);
  });

  it.each([
    ['BFF_BOOTSTRAP_API_KEY', 'not-a-key'],
    ['API_KEY_CACHE_TTL_MS', '5001'],
    ['API_KEY_CACHE_TTL_MS', '-1'],
    ['METRICS_PUBLIC', 'sometimes'],
    ['RATE_LIMIT_WINDOW_MS', '0'],
    ['RATE_LIMIT_ADMIN', 'many'],
    ['RATE_LIMIT_ORDERS_WRITE', '1.5'],
  ])('rejects %s=%s and names the variable', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems.some((p) => p.startsWith(`${name}:`))).toBe(true);
  });

  it('never echoes a rejected value', () => {
    const secretish = 'trb_live_not-quite-a-key-value';
    expect(
      problemsOf({ BFF_BOOTSTRAP_API_KEY: secretish, RATE_LIMIT_ADMIN: 'many-many' }).join('\n'),
    ).not.toMatch(/not-quite|many-many/);
  });

  it('carries only its own variables (no other secret rides along on the instance)', () => {
    const sut = loadAuthConfig({ UPSTREAM_API_KEY: 'other-secret', RATE_LIMIT_ADMIN: '7' });
    expect(JSON.stringify(sut)).not.toContain('other-secret');
    expect(sut.RATE_LIMIT_ADMIN).toBe(7);
  });
});
