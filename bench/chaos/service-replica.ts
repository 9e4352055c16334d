import { SERVICE_MAIN_ARGS } from '../../src/common/node-flags';
import { freePort, waitUntilHealthy, type Managed, type ProcessGroup } from './processes';

/**
 * One replica of the service (`node dist/src/main.js`, NODE_ENV=test) on a fixed loopback port, so it comes
 * back at the same address after a `kill -9`. `extraEnv` of a start overrides the replica's env for that start
 * only (the crash tests arm CHECKOUT_CRASH_POINTS once, then restart without it).
 */
export class ServiceReplica {
  proc: Managed | null = null;
  starts = 0;
  /** Between freeze() and resume(). */
  frozen = false;
  /** How long the last start() took until healthy (ms). */
  lastStartMs = 0;

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly group: ProcessGroup,
    private readonly env: Record<string, string>,
  ) {}

  static async create(
    name: string,
    group: ProcessGroup,
    env: Record<string, string>,
  ): Promise<ServiceReplica> {
    return new ServiceReplica(name, await freePort(), group, env);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get up(): boolean {
    return this.proc !== null && !this.proc.exited();
  }

  /** Starts the process and waits (bounded) until /health/live answers. */
  async start(extraEnv: Record<string, string> = {}, timeoutMs = 60_000): Promise<void> {
    const t0 = Date.now();
    this.startDetached(extraEnv);
    await waitUntilHealthy(this.proc as Managed, `${this.url}/health/live`, timeoutMs);
    this.lastStartMs = Date.now() - t0;
  }

  /** Starts the process without waiting for it (a crash-point run may die before it is healthy). */
  startDetached(extraEnv: Record<string, string> = {}): Managed {
    if (this.up) throw new Error(`${this.name} is already running`);
    this.starts++;
    // BENCH_CPU_PROF_DIR in the replica's env: a V8 CPU profile of it, written there when it stops.
    const prof = this.env.BENCH_CPU_PROF_DIR;
    // As `npm start` runs it (tracing off unless OTEL_EXPORTER_OTLP_ENDPOINT is set).
    const args = prof
      ? ['--cpu-prof', `--cpu-prof-dir=${prof}`, ...SERVICE_MAIN_ARGS]
      : [...SERVICE_MAIN_ARGS];
    this.proc = this.group.spawn(`${this.name}#${this.starts}`, args, {
      ...this.env,
      ...extraEnv,
      HOST: '127.0.0.1',
      PORT: String(this.port),
    });
    return this.proc;
  }

  async kill9(): Promise<void> {
    if (this.proc) await this.group.kill9(this.proc);
    this.frozen = false;
  }

  /**
   * SIGSTOP: the process keeps its sockets and database connections but runs nothing (a long GC pause, a
   * stalled VM) until resume(); its leases run out meanwhile and the other replica takes its work over.
   */
  freeze(): void {
    if (!this.up || !this.proc) throw new Error(`${this.name} is not running`);
    process.kill(this.proc.pid, 'SIGSTOP');
    this.frozen = true;
  }

  /** SIGCONT after freeze(); a no-op when it is not frozen or has exited since. */
  resume(): void {
    if (this.frozen && this.up && this.proc) process.kill(this.proc.pid, 'SIGCONT');
    this.frozen = false;
  }

  async stop(): Promise<void> {
    if (this.proc) await this.group.stop(this.proc);
  }

  output(): string {
    return this.proc?.output() ?? '';
  }
}
