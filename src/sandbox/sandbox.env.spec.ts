import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_API_KEY, DEFAULT_SANDBOX_READONLY_API_KEY } from './sandbox.options';
import { loadSandboxOptions } from './sandbox.env';
import { configProblems } from '../config/validate-env';

const problemsOf = (env: NodeJS.ProcessEnv): readonly string[] =>
  configProblems(() => loadSandboxOptions(env));

describe(loadSandboxOptions.name, () => {
  it('applies documented defaults', () => {
    expect(loadSandboxOptions({})).toMatchObject({
      host: '127.0.0.1',
      port: 4010,
      events: 20,
      listings: 2000,
      apiKey: DEFAULT_SANDBOX_API_KEY,
      readOnlyApiKey: DEFAULT_SANDBOX_READONLY_API_KEY,
      blockhashLifetimeMs: 60_000,
      landingDelayMs: 1500,
      faults: [],
    });
  });

  it('parses numbers and fault rules', () => {
    const options = loadSandboxOptions({
      SANDBOX_PORT: '0',
      SANDBOX_LISTINGS: '50000',
      SANDBOX_LANDING_FAILURE_PROBABILITY: '0.25',
      SANDBOX_FAULTS: '[{"operation":"listings","kind":"error","rate":0.1}]',
    });
    expect(options).toMatchObject({ port: 0, listings: 50_000, landingFailureProbability: 0.25 });
    expect(options.faults).toEqual([{ operation: 'listings', kind: 'error', rate: 0.1 }]);
  });

  it('lists every bad variable without echoing values', () => {
    const secret = 'trk_live_real_production_secret_key';
    const problems = problemsOf({
      SANDBOX_PORT: 'x',
      SANDBOX_API_KEY: secret,
      SANDBOX_FAULTS: '{',
      SANDBOX_LANDING_FAILURE_PROBABILITY: '2',
    }).join('\n');
    for (const name of [
      'SANDBOX_PORT',
      'SANDBOX_API_KEY',
      'SANDBOX_FAULTS',
      'SANDBOX_LANDING_FAILURE_PROBABILITY',
    ]) {
      expect(problems).toContain(name);
    }
    expect(problems).not.toContain(secret);
    expect(() => loadSandboxOptions({ SANDBOX_FAULTS: '[{"operation":"x","kind":"error"}]' })).toThrow(
      /SANDBOX_FAULTS/,
    );
  });
});
