import { sleep, waitFor } from './processes';
import type { ServiceReplica } from './service-replica';

export type DisruptionKind = 'kill' | 'pg-restart' | 'freeze' | 'kill-both';

export interface DisruptionCounts {
  /** `kill -9` of one random replica, restarted after 0.2–1 s. */
  kills: number;
  /** PostgreSQL stopped immediately (SIGQUIT to the postmaster) and started again. */
  pgRestarts: number;
  /** One random replica SIGSTOPped for `freezeMs` (past its leases), then SIGCONT. */
  freezes: number;
  /** `kill -9` of both replicas at the same moment, both restarted after 0.2–1 s. */
  doubleKills: number;
}

export interface DisruptionStep {
  /** Runs once this many orders were started. */
  at: number;
  kind: DisruptionKind;
}

/**
 * When each disruption runs, by orders started: single kills evenly spread (as before), PostgreSQL restarts
 * around 30 % of the run, freezes around 50 %, double kills around 70 % (with more than one of a kind,
 * spread as `(i + offset) / count`). Sorted: the steps run one after the other, never overlapping.
 */
export function disruptionSchedule(orders: number, counts: DisruptionCounts): DisruptionStep[] {
  const steps: DisruptionStep[] = [];
  for (let k = 0; k < counts.kills; k++)
    steps.push({ at: Math.floor(((k + 1) * orders) / (counts.kills + 1)), kind: 'kill' });
  const spread = (count: number, offset: number, kind: DisruptionKind): void => {
    for (let i = 0; i < count; i++) steps.push({ at: Math.floor(((i + offset) / count) * orders), kind });
  };
  spread(counts.pgRestarts, 0.3, 'pg-restart');
  spread(counts.freezes, 0.5, 'freeze');
  spread(counts.doubleKills, 0.7, 'kill-both');
  return steps.sort((a, b) => a.at - b.at);
}

/** What the disruptions did, for the report. */
export interface DisruptionLog {
  kills: number;
  doubleKills: number;
  pgRestarts: number;
  /** Per restart: from SIGQUIT until PostgreSQL accepted connections again. */
  pgOutagesMs: number[];
  pgRestartsSkipped: number;
  freezes: number;
  frozenMs: number[];
}

export interface DisruptorDeps {
  replicas: readonly ServiceReplica[];
  /** Null: the database is not the run's to restart (DATABASE_URL); restarts are skipped and counted. */
  restartDatabase: ((downMs: number) => Promise<void>) | null;
  freezeMs: number;
  pgDownMs: number;
  rng: () => number;
  log: (line: string) => void;
  /** Called when a disruption starts and ends: the "last fault" the final-state bound counts from. */
  onFault: () => void;
}

/** Runs the schedule against the replicas and the database while the orders run. */
export async function runDisruptions(
  steps: readonly DisruptionStep[],
  ordersStarted: () => number,
  deps: DisruptorDeps,
): Promise<DisruptionLog> {
  const done: DisruptionLog = {
    kills: 0,
    doubleKills: 0,
    pgRestarts: 0,
    pgOutagesMs: [],
    pgRestartsSkipped: 0,
    freezes: 0,
    frozenMs: [],
  };
  const { replicas, rng, log } = deps;
  const pickReplica = (): ServiceReplica => replicas[Math.floor(rng() * replicas.length)];
  const restartAfterKill = async (victims: readonly ServiceReplica[]): Promise<void> => {
    await sleep(200 + Math.floor(rng() * 800));
    await Promise.all(victims.map((v) => v.start()));
    deps.onFault();
    log(victims.map((v) => `${v.name} restarted as pid ${v.proc?.pid}`).join(', '));
  };
  for (const step of steps) {
    await waitFor(`order ${step.at} started`, () => ordersStarted() >= step.at, 30 * 60_000, 50);
    await sleep(Math.floor(rng() * 500));
    deps.onFault();
    const at = `at order ${ordersStarted()}`;
    switch (step.kind) {
      case 'kill': {
        const victim = pickReplica();
        const pid = victim.proc?.pid;
        await victim.kill9();
        done.kills++;
        log(`kill -9 ${victim.name} pid ${pid} (${done.kills}) ${at}`);
        await restartAfterKill([victim]);
        break;
      }
      case 'kill-both': {
        const pids = replicas.map((r) => r.proc?.pid).join(' ');
        // SIGKILL to both in the same tick: no replica is left to take anything over.
        await Promise.all(replicas.map((r) => r.kill9()));
        done.doubleKills++;
        log(`kill -9 of both replicas (pids ${pids}) ${at}`);
        await restartAfterKill(replicas);
        break;
      }
      case 'freeze': {
        const victim = pickReplica();
        victim.freeze();
        const t0 = Date.now();
        log(`SIGSTOP ${victim.name} pid ${victim.proc?.pid} for ${deps.freezeMs} ms ${at}`);
        try {
          await sleep(deps.freezeMs);
        } finally {
          victim.resume();
        }
        done.freezes++;
        done.frozenMs.push(Date.now() - t0);
        log(`SIGCONT ${victim.name} after ${Date.now() - t0} ms`);
        break;
      }
      case 'pg-restart': {
        if (!deps.restartDatabase) {
          done.pgRestartsSkipped++;
          log(`PostgreSQL restart skipped ${at}: the database is not the run's own (DATABASE_URL)`);
          break;
        }
        const t0 = Date.now();
        log(`PostgreSQL stopped immediately (SIGQUIT) ${at}`);
        await deps.restartDatabase(deps.pgDownMs);
        done.pgRestarts++;
        done.pgOutagesMs.push(Date.now() - t0);
        log(`PostgreSQL accepting connections again after ${Date.now() - t0} ms`);
        break;
      }
    }
    deps.onFault();
  }
  return done;
}
