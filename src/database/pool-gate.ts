import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool } from 'pg';

/**
 * The pool's reserved share for request handling. Background work (checkout drives, the recovery worker, the
 * ledger tracker) runs inside `inBackground`; while it does, every connection it checks out of the pool first
 * takes one of `background` permits (the pool size minus a reserved quarter). So however many orders are being
 * driven, request handling always has the reserved connections and never waits behind a queue of background
 * statements longer than one statement. A permit that cannot be had within the pool's acquire timeout fails
 * with DatabaseBusyError, like the pool itself would.
 */

const backgroundContext = new AsyncLocalStorage<true>();

/** Runs `fn` (and everything it starts) as background work: its connections come out of the background share. */
export function inBackground<T>(fn: () => T): T {
  return backgroundContext.run(true, fn);
}

export function isBackground(): boolean {
  return backgroundContext.getStore() === true;
}

/** Retry-After (seconds) of a 503 DATABASE_BUSY. */
export const DATABASE_BUSY_RETRY_AFTER_S = 1;

/** No connection (or background permit) within the acquire timeout: the database is overloaded, retry later. */
export class DatabaseBusyError extends Error {
  readonly code = 'DATABASE_BUSY';
  constructor(message = 'No database connection became free in time') {
    super(message);
    this.name = 'DatabaseBusyError';
  }
}

/**
 * A connection checked out for a long piece of work (a sync pass, `sync:verify`) was lost: the server
 * terminated it (`pg_terminate_backend`, a restart) or the socket broke. The work fails; nothing of it that
 * was not committed happened.
 */
export class DatabaseConnectionLostError extends Error {
  readonly code = 'DATABASE_CONNECTION_LOST';
  constructor(readonly reason: Error) {
    super(`The database connection was lost: ${reason.message}`);
    this.name = 'DatabaseConnectionLostError';
  }
}

/** A counting semaphore with a FIFO queue and a bounded wait. */
export class Semaphore {
  private used = 0;
  private readonly waiters: { grant: () => void }[] = [];

  constructor(readonly size: number) {}

  get inUse(): number {
    return this.used;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** A release function (idempotent), or rejects with `onTimeout()` after `timeoutMs`. */
  acquire(timeoutMs: number, onTimeout: () => Error): Promise<() => void> {
    if (this.used < this.size && this.waiters.length === 0) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          this.used++;
          resolve(this.releaser());
        },
      };
      const timer = setTimeout(() => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(onTimeout());
      }, timeoutMs);
      timer.unref();
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.used--;
      const next = this.waiters.shift();
      if (next) next.grant();
    };
  }
}

type ConnectCallback = (err: Error | undefined, client?: GateClient, done?: (err?: unknown) => void) => void;
interface GateClient {
  release: (err?: unknown) => void;
}
/** The part of pg's Pool the gate wraps. */
export interface GatedPool {
  connect(callback?: ConnectCallback): Promise<GateClient> | undefined;
}

export interface PoolGate {
  /** Connections background work may hold at once. */
  readonly background: number;
  /** Connections only request handling can get. */
  readonly reserved: number;
  readonly permits: Semaphore;
}

const GATE = Symbol('poolGate');

/** Reserved connections for a pool of `size`: a quarter (none below 4, where background needs them all). */
export function reservedConnections(size: number): number {
  return Math.floor(size / 4);
}

/** Installs the gate on the pool (DatabaseModule's PG_POOL) once; returns it. */
export function installPoolGate(pg: Pool, size: number, acquireTimeoutMs: number): PoolGate {
  const pool = pg as unknown as GatedPool & { [GATE]?: PoolGate };
  if (pool[GATE]) return pool[GATE];
  const reserved = reservedConnections(size);
  const gate: PoolGate = { background: size - reserved, reserved, permits: new Semaphore(size - reserved) };
  const connect = pool.connect.bind(pool) as (cb: ConnectCallback) => void;
  const gated = (callback: ConnectCallback): void => {
    if (!isBackground() || gate.reserved === 0) return connect(callback);
    gate.permits
      .acquire(
        acquireTimeoutMs,
        () => new DatabaseBusyError('No background database connection became free in time'),
      )
      .then(
        (releasePermit) =>
          connect((err, client, done) => {
            if (err || !client || !done) {
              releasePermit();
              return callback(err);
            }
            // pg sets `client.release` afresh at every checkout; this wrapper lives for this checkout only.
            const release = (e?: unknown): void => {
              releasePermit();
              done(e);
            };
            client.release = release;
            callback(undefined, client, release);
          }),
        (error: Error) => callback(error),
      );
  };
  pool.connect = (callback?: ConnectCallback) => {
    if (callback) {
      gated(callback);
      return undefined;
    }
    return new Promise<GateClient>((resolve, reject) =>
      gated((err, client) => (err || !client ? reject(err ?? new Error('no client')) : resolve(client))),
    );
  };
  pool[GATE] = gate;
  return gate;
}

/** The gate installed on this pool, if any. */
export function poolGateOf(pool: Pool): PoolGate | null {
  return (pool as unknown as { [GATE]?: PoolGate })[GATE] ?? null;
}

/** SQLSTATEs that mean this connection is gone (or never came): the server ended it or cannot serve it. */
const CONNECTION_SQLSTATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, or a fast/immediate shutdown cutting the connection
  '57P02', // crash_shutdown: another backend crashed, the server restarts
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '57P05', // idle_session_timeout: the server dropped an idle pooled connection
  '08000', // connection_exception
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08003', // connection_does_not_exist
  '08004', // sqlserver_rejected_establishment_of_sqlconnection
  '08006', // connection_failure
  '08007', // transaction_resolution_unknown
]);
/** SQLSTATEs that mean "overloaded or briefly unavailable, retry": not a bug of the request. */
const TRANSIENT_SQLSTATES = new Set([
  ...CONNECTION_SQLSTATES,
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
  '57014', // query_canceled (statement_timeout)
  '55P03', // lock_not_available (lock_timeout)
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '25006', // read_only_sql_transaction: a failover left this connection on a standby
]);
/** Socket errors of a connection to the database (refused while it restarts, reset, unreachable, DNS). */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);
/** pg's own errors for a lost or unusable connection; they carry no code. */
const CONNECTION_MESSAGES = [
  // "…unexpectedly", "…due to connection timeout", and plain "Connection terminated" (client ended).
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];
const TRANSIENT_MESSAGES = ['timeout exceeded when trying to connect', ...CONNECTION_MESSAGES];

/** The error and what it wraps (TypeORM's driverError, `cause`, an AggregateError's errors), bounded. */
function* errorChain(error: unknown, depth = 0): Generator {
  if (depth > 4 || typeof error !== 'object' || error === null) return;
  yield error;
  const { driverError, cause, errors } = error as {
    driverError?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (driverError !== undefined) yield* errorChain(driverError, depth + 1);
  if (cause !== undefined) yield* errorChain(cause, depth + 1);
  if (Array.isArray(errors)) for (const e of errors.slice(0, 4)) yield* errorChain(e, depth + 1);
}

function matches(error: unknown, sqlStates: Set<string>, messages: readonly string[]): boolean {
  for (const e of errorChain(error)) {
    if (e instanceof DatabaseConnectionLostError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (sqlStates.has(code) || NETWORK_ERROR_CODES.has(code))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && messages.some((m) => message.startsWith(m))) return true;
  }
  return false;
}

/**
 * Whether an error means the connection itself is gone (terminated by the server, restart, broken socket):
 * work that held that one connection cannot go on with it.
 */
export function isConnectionLost(error: unknown): boolean {
  return matches(error, CONNECTION_SQLSTATES, CONNECTION_MESSAGES);
}

/**
 * Whether an error means the database is overloaded or briefly unreachable (pool acquire timeout, too many
 * connections, statement timeout, the server restarting or failing over, a lost connection…), so the request
 * may be retried: answered 503 with Retry-After, never 500.
 */
export function isDatabaseBusy(error: unknown): boolean {
  if (error instanceof DatabaseBusyError) return true;
  return matches(error, TRANSIENT_SQLSTATES, TRANSIENT_MESSAGES);
}
