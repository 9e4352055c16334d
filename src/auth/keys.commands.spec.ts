import { describe, expect, it } from 'vitest';
import { API_KEY_PATTERN } from './api-key';
import { KEYS_USAGE, runKeysCommand } from './keys.commands';

/** Only the paths that never reach a database (the e2e test covers create/list/revoke). */
async function run(argv: string[], env: NodeJS.ProcessEnv = { NODE_ENV: 'test' }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runKeysCommand(argv, env, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe(runKeysCommand.name, () => {
  it('generate prints one well-formed key', async () => {
    const result = await run(['generate']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(API_KEY_PATTERN);
  });

  it.each([
    ['no command', []],
    ['unknown command', ['drop']],
    ['unknown option', ['list', '--all']],
    ['create without name', ['create', '--scopes', 'admin']],
    ['create with control characters in the name', ['create', '--name', 'a\u0007', '--scopes', 'admin']],
    ['create without scopes', ['create', '--name', 'x']],
    ['create with an unknown scope', ['create', '--name', 'x', '--scopes', 'root']],
    ['revoke with a non-uuid', ['revoke', '42']],
  ])('%s is a usage error (exit 2)', async (_name, argv) => {
    const result = await run(argv);
    expect(result.code).toBe(2);
  });

  it.each([
    ['a malformed user subject pattern', ['--scopes', 'orders:write', '--user-subject', 'a*b'], 'trailing *'],
    ['a bound admin key', ['--scopes', 'admin', '--integrator-subject', 'acme'], 'admin key cannot be bound'],
    [
      'a write key and neither a binding nor --any-subject',
      ['--scopes', 'orders:write'],
      'any subject explicitly',
    ],
    [
      'a subject pattern with a slash',
      ['--scopes', 'orders:write', '--user-subject', 'alice/*'],
      'trailing *',
    ],
  ])(
    'create with %s is a usage error naming the options, before any database work',
    async (_n, argv, why) => {
      const result = await run(['create', '--name', 'x', ...argv]);
      expect(result.code).toBe(2);
      expect(result.err).toContain('--user-subject/--integrator-subject');
      expect(result.err).toContain(why);
    },
  );

  it('prints usage on --help', async () => {
    const result = await run(['--help']);
    expect([result.code, result.out]).toEqual([0, KEYS_USAGE]);
  });

  it('refuses to run in production without a pepper (exit 2, names the variable)', async () => {
    const result = await run(['list'], {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://u:p@127.0.0.1:1/x',
    });
    expect(result.code).toBe(2);
    expect(result.err).toContain('API_KEY_PEPPER');
  });
});
