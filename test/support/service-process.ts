import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { SERVICE_MAIN_ARGS } from '../../src/common/node-flags';
import { raceTimeout } from '../../src/common/race-timeout';

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** The service's command line as `npm start` runs it (src/common/node-flags.ts). */
export const SERVICE_COMMAND: [string, ...string[]] = [process.execPath, ...SERVICE_MAIN_ARGS];

/**
 * Starts the service and waits for its "listening" log line: SERVICE_COMMAND (built in global setup) by
 * default, or another command line such as `npm start`.
 */
export async function spawnService(
  env: Record<string, string>,
  timeoutMs = 30_000,
  command: [string, ...string[]] = SERVICE_COMMAND,
): Promise<ServiceProcess> {
  const [file, ...args] = command;
  const child = spawn(file, args, {
    // No drain delay unless a test asks for one: nothing balances these processes, and a SIGTERM-stopped
    // test replica should exit at once (test/e2e/rolling-restart.e2e-spec.ts tests the drain).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      PORT: '0',
      SHUTDOWN_DRAIN_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      // Not left running: a caller whose start failed has no handle to stop it with.
      child.kill('SIGKILL');
      reject(new Error(`service did not start in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const poll = setInterval(() => {
      const match = /"url":"(http:\/\/[^"]+)".*"msg":"ticket-resale-bff listening"/.exec(out);
      if (match) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(match[1]);
      }
    }, 50);
    child.once('exit', (code, signal) => {
      clearInterval(poll);
      clearTimeout(timer);
      // 'exit' can come before the last of the output (`startup failed: …` on stderr): the message waits for
      // the pipes to close, 2 s at most (a grandchild of `npm start` may hold them).
      const closed = new Promise<void>((resolveClosed) => child.once('close', () => resolveClosed()));
      void raceTimeout(closed, 2000).then(() =>
        reject(new Error(`service exited early with ${code ?? signal}:\n${out}`)),
      );
    });
  });
  return { child, url, output: () => out };
}

export async function waitForExit(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`process ${child.pid} still running after ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** PID of the postmaster that owns a cluster directory, or null when none is running. */
export async function postmasterPid(clusterDir: string): Promise<number | null> {
  try {
    const pid = Number.parseInt(
      (await readFile(`${clusterDir}/postmaster.pid`, 'utf8')).split('\n')[0] ?? '',
      10,
    );
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A fresh DATA_DIR for the tests of the enclosing describe block. Afterwards a postmaster a failed
 * test left behind is killed, then the directory is removed. Returns a getter (set in beforeAll).
 */
export function useTempDataDir(prefix: string): () => string {
  let dataDir = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), prefix));
    // The embedded cluster runs as the `postgres` user when the tests run as root: it must traverse.
    await chmod(dataDir, 0o755);
  });
  afterAll(async () => {
    const pid = await postmasterPid(join(dataDir, 'postgres'));
    if (pid) process.kill(pid, 'SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });
  return () => dataDir;
}
