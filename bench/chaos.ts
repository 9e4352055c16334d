import { formatChaosReport, runChaos } from './chaos/chaos.run';
import { provisionDatabase } from './chaos/database';
import { ProcessGroup } from './chaos/processes';

/**
 * `npm run chaos`: the checkout chaos run (docs/chaos.md). Parameters from flags (`--orders=60`) or the
 * environment (CHAOS_ORDERS, CHAOS_CONCURRENCY, CHAOS_KILLS, CHAOS_PG_RESTARTS, CHAOS_FREEZES,
 * CHAOS_DOUBLE_KILLS, CHAOS_SEED, CHAOS_FAULT_RATE, CHAOS_NULL_ID_PAGES, CHAOS_CONTENDED_SHARE,
 * CHAOS_CONTENDERS); the database from DATABASE_URL (a fresh database is created in it and dropped; PostgreSQL
 * restarts are then skipped) or a throwaway embedded cluster of the run's own. Prints the figures and exits 1
 * on any breach (a 500 and a false rejection are breaches), 2 when the run itself failed.
 */
function param(name: string, fallback: string): string {
  const flag = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (flag) return flag.slice(name.length + 3);
  const fromEnv = process.env[`CHAOS_${name.toUpperCase().replaceAll('-', '_')}`];
  return fromEnv === undefined || fromEnv === '' ? fallback : fromEnv;
}

function intParam(name: string, fallback: number, min: number, max: number): number {
  const value = Number(param(name, String(fallback)));
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new Error(`${name} must be an integer in ${min}..${max}`);
  return value;
}

function shareParam(name: string, fallback: number): number {
  const value = Number(param(name, String(fallback)));
  if (!(value >= 0 && value <= 1)) throw new Error(`${name} must be within 0..1`);
  return value;
}

async function main(): Promise<number> {
  const orders = intParam('orders', 1000, 1, 100_000);
  const concurrency = intParam('concurrency', 20, 1, 500);
  const kills = intParam('kills', 10, 0, 1000);
  const pgRestarts = intParam('pg-restarts', 1, 0, 100);
  const freezes = intParam('freezes', 1, 0, 100);
  const doubleKills = intParam('double-kills', 1, 0, 100);
  const seed = param('seed', 'chaos-1');
  const faultRate = shareParam('fault-rate', 0.2);
  const nullIdPages = shareParam('null-id-pages', 0.1);
  const contendedShare = shareParam('contended-share', 0.1);
  const contenders = intParam('contenders', 3, 2, 50);

  const group = new ProcessGroup();
  const database = await provisionDatabase(process.env.DATABASE_URL || undefined);
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.error(`chaos: ${signal}, stopping every started process`);
    void group
      .stopAll(5_000)
      .then(() => database.close())
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    console.log(
      `chaos: ${orders} orders, concurrency ${concurrency}, ${kills} kills, ${doubleKills} double kills, ` +
        `${pgRestarts} PostgreSQL restarts, ${freezes} freezes, seed ${seed}`,
    );
    const report = await runChaos({
      orders,
      concurrency,
      kills,
      pgRestarts,
      freezes,
      doubleKills,
      seed,
      faultRate,
      nullIdPages,
      contendedShare,
      contenders,
      databaseUrl: database.url,
      restartDatabase: database.restart,
      group,
      log: (line) => console.log(`chaos: ${line}`),
    });
    console.log(formatChaosReport(report));
    return report.breaches.length === 0 ? 0 : 1;
  } finally {
    await group.stopAll();
    await database.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
