import { ProcessGroup } from '../../bench/chaos/processes';
import { replicaEnv } from '../../bench/chaos/service-env';
import { ServiceReplica } from '../../bench/chaos/service-replica';
import { generateApiKey } from '../../src/auth/api-key';
import { createDatabaseFromTemplate, dropDatabase } from './test-database';
import { waitUntil } from './wait';

export type ReplicaName = 'a' | 'b';

/**
 * Replica variables for a test that never stops a replica and needs both counted: each sees the other within
 * 200 ms, and a cut-off well above a loaded machine's stall, so a live replica is never dropped (which would hand
 * the other its whole share of the budgets).
 */
export const BOTH_COUNTED = { REPLICA_HEARTBEAT_MS: '200', REPLICA_DEAD_AFTER_MS: '10000' } as const;

/** `service_replicas_live` on a replica's /metrics (with the admin key, so it works whether or not it is public). */
export async function liveReplicas(url: string, apiKey: string): Promise<number | null> {
  const res = await fetch(`${url}/metrics`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(5_000),
  });
  const match = /^service_replicas_live(?:\{[^}]*\})? (\S+)$/m.exec(await res.text());
  return match ? Number(match[1]) : null;
}

/**
 * Two real service processes on one database, the set-up the `*-replicas.e2e-spec.ts` files share: a fresh
 * database copied from the migrated template, `<name>-a` and `<name>-b` started one after the other (both run the
 * migrations at boot) with `replicaEnv` (bootstrap admin key `apiKey`) plus the test's own variables, and the
 * teardown: every process of the group stopped, then the database dropped. A test that starts more processes
 * (a sandbox process, a restarted replica) puts them in `group` so that `stop` ends them too.
 */
export class TwoReplicas {
  readonly group = new ProcessGroup();
  readonly apiKey = generateApiKey();
  databaseUrl = '';

  constructor(private readonly adminUrl: string) {}

  /**
   * Creates the database and starts both replicas. `upstreamUrl`: the upstream each replica calls (one URL, or
   * one per replica, e.g. through a counting proxy). `waitLiveMs`: also wait (bounded) until each replica counts
   * both live (its heartbeat has seen the other's), before any per-replica budget is measured.
   */
  async start(options: {
    name: string;
    upstreamUrl: string | ((replica: ReplicaName) => string);
    extra: Record<string, string>;
    waitLiveMs?: number;
  }): Promise<{ a: ServiceReplica; b: ServiceReplica }> {
    this.databaseUrl = await createDatabaseFromTemplate(this.adminUrl);
    const env = (replica: ReplicaName) =>
      replicaEnv({
        databaseUrl: this.databaseUrl,
        sandboxUrl:
          typeof options.upstreamUrl === 'string' ? options.upstreamUrl : options.upstreamUrl(replica),
        apiKey: this.apiKey,
        extra: options.extra,
      });
    const a = await ServiceReplica.create(`${options.name}-a`, this.group, env('a'));
    const b = await ServiceReplica.create(`${options.name}-b`, this.group, env('b'));
    await a.start();
    await b.start();
    if (options.waitLiveMs !== undefined) {
      await waitUntil(
        async () =>
          (await liveReplicas(a.url, this.apiKey)) === 2 && (await liveReplicas(b.url, this.apiKey)) === 2,
        options.waitLiveMs,
        100,
      );
    }
    return { a, b };
  }

  /** Stops every process of the group, then drops the database (if it was created). */
  async stop(): Promise<void> {
    await this.group.stopAll();
    if (this.databaseUrl) await dropDatabase(this.adminUrl, this.databaseUrl);
  }
}
