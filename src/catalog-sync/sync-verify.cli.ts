import 'reflect-metadata';
import { loadAppConfig } from '../config/app.config';
import { loadSandboxOptions } from '../config/sandbox.config';
import { loadSyncConfig } from '../config/sync.config';
import { loadUpstreamConfig } from '../config/upstream.config';
import { createDataSource } from '../database/data-source';
import { withServiceDatabase } from '../database/database-url';
import { UpstreamClient } from '../upstream/upstream.client';
import { upstreamOptionsFromConfig } from '../upstream/upstream.options';
import { resolveUpstreamTarget } from '../upstream/upstream-target';
import { pgPool } from './sql';
import { formatFindings, verifyMirror } from './sync-verify';

/**
 * `npm run sync:verify`: compares the mirror with the upstream now (the same configuration as the service:
 * DATABASE_URL or the embedded cluster, UPSTREAM_* or a sandbox seeded like the service's). Prints missing /
 * extra / differing rows; exit 0 when they match, 1 when they differ, 2 on a usage or configuration error.
 */
async function main(): Promise<number> {
  const env = process.env;
  const app = loadAppConfig(env);
  const upstreamConfig = loadUpstreamConfig(env);
  const sync = loadSyncConfig(env);
  const target = await resolveUpstreamTarget(
    upstreamConfig,
    upstreamConfig.usesInProcessSandbox ? loadSandboxOptions(env) : {},
  );
  const upstream = new UpstreamClient(upstreamOptionsFromConfig(upstreamConfig, target));
  try {
    return await withServiceDatabase(
      app,
      (url) => createDataSource({ url, poolSize: 2, applicationName: 'sync-verify' }),
      async (dataSource) => {
        const { text, clean } = formatFindings(
          await verifyMirror(pgPool(dataSource), upstream, sync.SYNC_PAGE_SIZE),
        );
        process.stdout.write(`${text}\n`);
        return clean ? 0 : 1;
      },
    );
  } finally {
    upstream.close();
    await target.sandbox?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`sync:verify: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
