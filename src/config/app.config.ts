import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Matches, MinLength } from 'class-validator';
import { DEFAULT_HOST, isLocalDemo } from './deployment';
import { ConfigValidationError, EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const NODE_ENVS = ['development', 'production', 'test'] as const;

const toList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0)
    : value;

/**
 * The service's own variables (HTTP, database, logs, docs). Auth, upstream and sandbox variables have
 * their own classes; `.env.example` documents every class's variables (a unit test compares them).
 */
export class AppConfig {
  @IsIn(NODE_ENVS, { message: `NODE_ENV must be one of ${NODE_ENVS.join(', ')}` })
  NODE_ENV: (typeof NODE_ENVS)[number] = 'development';

  @EnvInt(0, 65535)
  PORT = 3000;

  @IsString()
  @Matches(/^[0-9A-Za-z.:\-[\]]+$/, { message: 'HOST must be a host name or IP address' })
  HOST = DEFAULT_HOST;

  /** Unset: an embedded PostgreSQL under DATA_DIR is started and used. */
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  @IsString()
  @MinLength(1)
  DATA_DIR = '.data';

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel = 'info';

  /** Extra pino redaction paths (comma-separated), on top of the built-in secret paths. */
  @Transform(toList)
  @IsString({ each: true })
  LOG_REDACT_PATHS: string[] = [];

  @EnvBool()
  MIGRATIONS_RUN = true;

  @EnvInt(1, 100)
  DB_POOL_SIZE = 10;

  @EnvInt(100, 30_000)
  @Retried({ unit: 'ms', bounds: 'each readiness check', where: 'health/health.controller.ts' })
  HEALTH_CHECK_TIMEOUT_MS = 1500;

  /** The whole graceful shutdown, drain delay included; then the process is forced down (exit 1). */
  @EnvInt(100, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 'graceful shutdown (drain delay included) before the process is forced down',
    where: 'main.ts',
  })
  SHUTDOWN_TIMEOUT_MS = 8000;

  /**
   * After SIGTERM, how long readiness answers 503 while everything else is still served (with
   * `Connection: close`) before the server closes: at least the balancer's readiness period × failure
   * threshold, so it has stopped routing here first (docs/DEPLOY.md). SIGINT (a terminal's Ctrl-C) skips it.
   */
  @EnvInt(0, 59_000)
  @Retried({
    unit: 'ms',
    bounds: 'after SIGTERM: readiness 503, everything else still served, then the server closes',
    where: 'main.ts',
  })
  SHUTDOWN_DRAIN_DELAY_MS = 5000;

  @EnvInt(1024, 10 * 1024 * 1024)
  BODY_LIMIT_BYTES = 64 * 1024;

  /** Whole request (headers and body) must arrive within this, else 408 and the connection closes. */
  @EnvInt(100, 600_000)
  @Retried({
    unit: 'ms',
    bounds: 'a whole inbound request (headers and body), else 408',
    where: 'app.factory.ts',
  })
  HTTP_REQUEST_TIMEOUT_MS = 30_000;

  /** Request headers must arrive within this (capped at HTTP_REQUEST_TIMEOUT_MS), else 408. */
  @EnvInt(100, 600_000)
  @Retried({ unit: 'ms', bounds: 'inbound request headers, else 408', where: 'app.factory.ts' })
  HTTP_HEADERS_TIMEOUT_MS = 10_000;

  @EnvBool()
  @IsOptional()
  DOCS_ENABLED?: boolean;

  /**
   * How often this replica writes its heartbeat row and re-reads the others' (ms): the live replica count that
   * divides the budgets (client rate limits, the upstream rate) and other replicas' upstream 429s.
   */
  @EnvInt(100, 60_000)
  REPLICA_HEARTBEAT_MS = 1_000;

  /** A replica whose last heartbeat (database clock) is older than this is not counted (ms; ≥ 2 heartbeats). */
  @EnvInt(200, 600_000)
  REPLICA_DEAD_AFTER_MS = 5_000;

  /** `GET /status` (the operator page): served in the local demo; elsewhere only when true. */
  @EnvBool()
  @IsOptional()
  STATUS_PAGE_ENABLED?: boolean;

  /** How long the status page's per-minute samples are kept (hours). */
  @EnvInt(1, 720)
  STATUS_RETENTION_HOURS = 48;

  /** How often each replica records its status samples and prunes old ones (ms). */
  @EnvInt(200, 60_000)
  @Retried({
    unit: 'ms',
    bounds: "each replica's status-sample recording and pruning (the status page's per-minute figures)",
    where: 'status/status.recorder.ts',
  })
  STATUS_RECORD_INTERVAL_MS = 15_000;

  /** Lifetime of the status page's login cookie (ms); then the key is asked for again. */
  @EnvInt(60_000, 86_400_000)
  @Retried({
    unit: 'ms',
    bounds: "the status page's login cookie; then the key is asked for again",
    where: 'status/',
  })
  STATUS_SESSION_TTL_MS = 900_000;

  /**
   * Filled in by loadAppConfig (config/deployment.ts): loopback HOST, in-process sandbox upstream, NODE_ENV not
   * production. Every development allowance keys on it, never on NODE_ENV alone.
   */
  localDemo = false;

  /** `/docs` is open in the local demo; elsewhere only when DOCS_ENABLED=true. */
  get docsEnabled(): boolean {
    return this.DOCS_ENABLED ?? this.localDemo;
  }

  /** `/status` and its assets: open (to admin keys) in the local demo; elsewhere only when enabled. */
  get statusPageEnabled(): boolean {
    return this.STATUS_PAGE_ENABLED ?? this.localDemo;
  }
}

/** Part of SHUTDOWN_TIMEOUT_MS the drain delay must leave for `app.close()`: in-flight requests, background work. */
export const MIN_CLOSE_BUDGET_MS = 1000;

/** Reads and validates the environment once; throws ConfigValidationError naming every bad variable. */
export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const config = validateEnvClass(AppConfig, env);
  const problems: string[] = [];
  if (config.REPLICA_DEAD_AFTER_MS < 2 * config.REPLICA_HEARTBEAT_MS)
    problems.push(
      'REPLICA_DEAD_AFTER_MS: must be at least twice REPLICA_HEARTBEAT_MS (one late heartbeat is not a death)',
    );
  const drain = config.SHUTDOWN_DRAIN_DELAY_MS;
  if (drain > 0 && drain + MIN_CLOSE_BUDGET_MS > config.SHUTDOWN_TIMEOUT_MS)
    problems.push(
      `SHUTDOWN_DRAIN_DELAY_MS: must leave at least ${MIN_CLOSE_BUDGET_MS} ms of SHUTDOWN_TIMEOUT_MS for closing (the drain and the close together must fit in the timeout)`,
    );
  if (problems.length > 0) throw new ConfigValidationError(problems);
  config.localDemo = isLocalDemo(env);
  return config;
}
