import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** Keeps the last `limit` characters a process printed (bounded, for error messages). */
class Tail {
  private text = '';
  constructor(private readonly limit = 64_000) {}
  push(chunk: Buffer): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit * 2) this.text = this.text.slice(-this.limit);
  }
  toString(): string {
    return this.text.slice(-this.limit);
  }
}

export interface Managed {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  output(): string;
  exited(): boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A loopback port free right now (the service and sandbox are started on ports chosen here). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Every process a chaos run or crash test starts, by PID: each is stopped at the end (SIGTERM, then SIGKILL
 * after a bounded wait), also when the run fails half-way.
 */
export class ProcessGroup {
  private readonly live = new Set<Managed>();
  private readonly everStarted: Managed[] = [];
  private readonly lineWatchers: ((process: string, line: string) => void)[] = [];

  /** `fn` sees every whole line any process started from now on prints (stdout and stderr). */
  watchLines(fn: (process: string, line: string) => void): void {
    this.lineWatchers.push(fn);
  }

  spawn(name: string, args: string[], env: Record<string, string>): Managed {
    const child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) throw new Error(`${name}: could not be started`);
    const tail = new Tail();
    for (const stream of [child.stdout, child.stderr]) {
      let partial = '';
      stream?.on('data', (c: Buffer) => {
        tail.push(c);
        if (this.lineWatchers.length === 0) return;
        const lines = (partial + c.toString()).split('\n');
        partial = (lines.pop() ?? '').slice(-65_536);
        for (const line of lines) for (const watch of this.lineWatchers) watch(name, line);
      });
    }
    const managed: Managed = {
      name,
      child,
      pid: child.pid,
      output: () => tail.toString(),
      exited: () => child.exitCode !== null || child.signalCode !== null,
    };
    this.live.add(managed);
    this.everStarted.push(managed);
    child.once('exit', () => this.live.delete(managed));
    return managed;
  }

  /** Every process started so far, exited ones included (their output stays readable for a report). */
  started(): readonly Managed[] {
    return this.everStarted;
  }

  /** `kill -9` of one process; resolves once it is gone (bounded). */
  async kill9(proc: Managed, timeoutMs = 10_000): Promise<void> {
    if (!proc.exited()) process.kill(proc.pid, 'SIGKILL');
    await waitForExit(proc, timeoutMs);
  }

  /** SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
  async stop(proc: Managed, graceMs = 10_000): Promise<void> {
    if (proc.exited()) return;
    process.kill(proc.pid, 'SIGTERM');
    // A process stopped by SIGSTOP (a frozen replica) acts on SIGTERM only once it runs again.
    process.kill(proc.pid, 'SIGCONT');
    try {
      await waitForExit(proc, graceMs);
    } catch {
      if (!proc.exited()) process.kill(proc.pid, 'SIGKILL');
      await waitForExit(proc, 5_000).catch(() => undefined);
    }
  }

  async stopAll(graceMs = 10_000): Promise<void> {
    await Promise.all([...this.live].map((p) => this.stop(p, graceMs)));
  }
}

export async function waitForExit(proc: Managed, timeoutMs: number): Promise<void> {
  if (proc.exited()) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${proc.name} (pid ${proc.pid}) still running after ${timeoutMs} ms`)),
      timeoutMs,
    );
    proc.child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Polls `check` until it holds; throws after `timeoutMs` (every wait here is bounded). */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(pollMs);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** Waits until `url` answers 200 or the process dies (then throws with its output). */
export async function waitUntilHealthy(proc: Managed, url: string, timeoutMs: number): Promise<void> {
  await waitFor(
    `${proc.name} healthy`,
    async () => {
      if (proc.exited())
        throw new Error(`${proc.name} exited (${proc.child.exitCode}) while starting:\n${proc.output()}`);
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
        await res.arrayBuffer();
        return res.status === 200;
      } catch {
        return false;
      }
    },
    timeoutMs,
    100,
  );
}

export { sleep };
