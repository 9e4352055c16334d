import 'reflect-metadata';
import { formatFindings, verifyMirror } from './catalog-sync/sync-verify';
import { pgPool } from './database/data-source';
import { createDataSource } from './database/data-source';
import { withServiceDatabase } from './database/database-url';
import { UpstreamClient } from './upstream/upstream.client';
import { upstreamOptionsFromConfig } from './upstream/upstream.options';
import { loadStartupConfig, resolveUpstreamTarget } from './upstream-target';

/**
 * `npm run sync:verify`: compares the mirror with the upstream now, with the service's configuration
 * (DATABASE_URL or the embedded cluster; UPSTREAM_* or an in-process sandbox seeded like the service's, which
 * is why it sits beside main.ts). Prints missing / extra / differing rows; exit 0 when the mirror matches,
 * 1 when it differs, 2 on a configuration or connection error.
 */
async function main(): Promise<number> {
  const config = loadStartupConfig(process.env);
  const target = await resolveUpstreamTarget(config.upstream, config.sandboxOptions);
  const upstream = UpstreamClient.create(upstreamOptionsFromConfig(config.upstream, target));
  try {
    return await withServiceDatabase(
      config.app,
      (url) => createDataSource({ url, poolSize: 2, applicationName: 'sync-verify' }),
      async (dataSource) => {
        const findings = await verifyMirror(pgPool(dataSource), upstream, config.sync.SYNC_PAGE_SIZE);
        const { text, clean } = formatFindings(findings);
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
