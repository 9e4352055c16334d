// `npm run client:generate`: regenerates clients/typescript/schema.ts from the document the service serves.
// It boots the app the way the tests do (test/e2e/client-sync.e2e-spec.ts, embedded PostgreSQL and sandbox
// from the test global setup) with CLIENT_GENERATE=write, so the file written is exactly what that test compares.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const result = spawnSync(
  process.execPath,
  [vitest, 'run', '--project', 'integration', 'test/e2e/client-sync.e2e-spec.ts'],
  { stdio: 'inherit', env: { ...process.env, CLIENT_GENERATE: 'write' } },
);
process.exit(result.status ?? 1);
