import { describe, expect, it } from 'vitest';
import { configProblems } from './config/validate-env';
import { loadStartupConfig } from './upstream-target';

const names = (env: NodeJS.ProcessEnv): string[] =>
  configProblems(() => loadStartupConfig(env))
    .map((p) => p.split(/[:[]/)[0])
    .sort();

describe(loadStartupConfig.name, () => {
  it('lists config problems and the sandbox fault-rule problems in one failed start', () => {
    expect(names({ PORT: 'abc', SANDBOX_FAULTS: '[{"operation":"nope","kind":"error"}]' })).toEqual([
      'PORT',
      'SANDBOX_FAULTS',
    ]);
  });

  it('turns SANDBOX_* into sandbox options only when the sandbox is the upstream', () => {
    const sut = loadStartupConfig({
      SANDBOX_LISTINGS: '7',
      SANDBOX_FAULTS: '[{"operation":"listings","kind":"error","rate":0.2}]',
    });
    expect(sut.sandboxOptions).toMatchObject({
      listings: 7,
      faults: [{ operation: 'listings', kind: 'error', rate: 0.2 }],
    });
    const remote = loadStartupConfig({
      UPSTREAM_BASE_URL: 'https://upstream.test',
      UPSTREAM_API_KEY: 'k'.repeat(20),
      // A real upstream is a deployment: it starts only with its own secrets (docs/DEPLOY.md).
      API_KEY_PEPPER: 'p'.repeat(32),
      CURSOR_SECRET: 'c'.repeat(32),
      SANDBOX_FAULTS: '[{"operation":"nope"}]',
    });
    expect(remote.sandboxOptions).toEqual({});
  });
});
