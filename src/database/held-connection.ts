import type { Pool, PoolClient } from 'pg';
import { DatabaseConnectionLostError } from './pool-gate';

/**
 * A pooled connection checked out for a long piece of work (a sync pass's walk, `sync:verify`).
 *
 * pg-pool listens for a client's `error` only while the client is idle in the pool. Checked out, a client
 * whose backend goes away (`pg_terminate_backend`, a restart, a failover, a broken socket) emits `error` to
 * nobody, and Node turns that into an uncaught exception: the process died. While held here the client has a
 * listener: the first error is kept as `lost` and handed to `onLost`, so the work fails instead (its next
 * statement fails too: the client is no longer queryable), and `release` then destroys the client.
 */
export interface HeldConnection {
  readonly client: PoolClient;
  /** Set once the connection was lost; the work's errors after that are this one's consequences. */
  readonly lost: DatabaseConnectionLostError | null;
  /** Hands the client back (once); destroyed when asked to or when it was lost. */
  release(destroy?: boolean): void;
}

export async function holdConnection(
  pool: Pool,
  onLost: (error: DatabaseConnectionLostError) => void = () => undefined,
): Promise<HeldConnection> {
  const client = await pool.connect();
  let lost: DatabaseConnectionLostError | null = null;
  let released = false;
  const listener = (error: Error): void => {
    if (lost) return;
    lost = new DatabaseConnectionLostError(error);
    onLost(lost);
  };
  client.on('error', listener);
  return {
    client,
    get lost() {
      return lost;
    },
    release(destroy = false) {
      if (released) return;
      released = true;
      // pg-pool puts its own idle listener back in release(), before it drops or parks the client.
      client.release(destroy || lost !== null);
      client.removeListener('error', listener);
    },
  };
}
