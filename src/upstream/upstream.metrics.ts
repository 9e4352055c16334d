import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { UpstreamOperation } from './upstream.error';

/** Label `status`: an HTTP status, or how an attempt ended without one. Bounded set, never a key or URL. */
export type AttemptStatus = `${number}` | 'timeout' | 'network' | 'circuit_open' | 'overloaded' | 'cancelled';

function getOrCreate<T>(
  registry: Registry | undefined,
  name: string,
  create: (registers: Registry[]) => T,
): T {
  const existing = registry?.getSingleMetric(name);
  return (existing as T | undefined) ?? create(registry === undefined ? [] : [registry]);
}

/**
 * The client's Prometheus metrics, registered on MetricsService.registry (shared when several clients use
 * one registry, as in tests). Without a registry they are kept but not exported.
 */
export class UpstreamMetrics {
  readonly requests: Counter<'operation' | 'status'>;
  readonly duration: Histogram<'operation' | 'status'>;
  readonly retries: Counter<'operation' | 'reason'>;
  readonly rateLimited: Counter<'operation'>;
  readonly circuitState: Gauge;
  readonly rateLimit: Gauge;

  constructor(registry?: Registry) {
    this.requests = getOrCreate(
      registry,
      'upstream_requests_total',
      (registers) =>
        new Counter({
          name: 'upstream_requests_total',
          help: 'Upstream HTTP attempts by operation and HTTP status (or timeout/network/circuit_open/overloaded/cancelled)',
          labelNames: ['operation', 'status'] as const,
          registers,
        }),
    );
    this.duration = getOrCreate(
      registry,
      'upstream_request_duration_seconds',
      (registers) =>
        new Histogram({
          name: 'upstream_request_duration_seconds',
          help: 'Duration of upstream HTTP attempts by operation and status',
          labelNames: ['operation', 'status'] as const,
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers,
        }),
    );
    this.retries = getOrCreate(
      registry,
      'upstream_retries_total',
      (registers) =>
        new Counter({
          name: 'upstream_retries_total',
          help: 'Upstream retries scheduled, by operation and reason (the failed attempt status)',
          labelNames: ['operation', 'reason'] as const,
          registers,
        }),
    );
    this.rateLimited = getOrCreate(
      registry,
      'upstream_rate_limited_total',
      (registers) =>
        new Counter({
          name: 'upstream_rate_limited_total',
          help: 'Upstream 429 responses by operation',
          labelNames: ['operation'] as const,
          registers,
        }),
    );
    this.circuitState = getOrCreate(
      registry,
      'upstream_circuit_state',
      (registers) =>
        new Gauge({
          name: 'upstream_circuit_state',
          help: 'Upstream circuit breaker: 0 closed, 1 open, 2 half-open, 3 isolated',
          registers,
        }),
    );
    this.rateLimit = getOrCreate(
      registry,
      'upstream_rate_limit_per_second',
      (registers) =>
        new Gauge({
          name: 'upstream_rate_limit_per_second',
          help: 'Current request rate the adaptive upstream limiter allows (lowered on 429)',
          registers,
        }),
    );
  }

  attempt(operation: UpstreamOperation, status: AttemptStatus, seconds: number): void {
    this.requests.inc({ operation, status });
    this.duration.observe({ operation, status }, seconds);
  }
}
