import { Injectable, Optional } from '@nestjs/common';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { MetricsService } from '../../metrics/metrics.service';
import type { UpstreamOperation } from '../upstream.error';

/** Label `status`: an HTTP status, or how an attempt ended without one. Bounded set, never a key or URL. */
export type AttemptStatus = `${number}` | 'timeout' | 'network' | 'circuit_open' | 'overloaded' | 'cancelled';

/**
 * The metric named `config.name` on `registry`, created there on first use: several clients may share
 * one registry (tests), and prom-client refuses to register a name twice.
 */
function registered<T, C extends { name: string }>(
  registry: Registry | undefined,
  Metric: new (config: C & { registers: Registry[] }) => T,
  config: C,
): T {
  const existing = registry?.getSingleMetric(config.name) as T | undefined;
  return existing ?? new Metric({ ...config, registers: registry === undefined ? [] : [registry] });
}

/**
 * The client's Prometheus metrics, registered on MetricsService.registry (shared when several clients use
 * one registry, as in tests). Without a registry they are kept but not exported.
 */
@Injectable()
export class UpstreamMetrics {
  readonly requests: Counter<'operation' | 'status'>;
  readonly duration: Histogram<'operation' | 'status'>;
  readonly retries: Counter<'operation' | 'reason'>;
  readonly rateLimited: Counter<'operation'>;
  readonly circuitState: Gauge;
  readonly rateLimit: Gauge;

  constructor(@Optional() metrics?: MetricsService) {
    const registry = metrics?.registry;
    this.requests = registered(registry, Counter<'operation' | 'status'>, {
      name: 'upstream_requests_total',
      help: 'Upstream HTTP attempts by operation and HTTP status (or timeout/network/circuit_open/overloaded/cancelled)',
      labelNames: ['operation', 'status'] as const,
    });
    this.duration = registered(registry, Histogram<'operation' | 'status'>, {
      name: 'upstream_request_duration_seconds',
      help: 'Duration of upstream HTTP attempts by operation and status',
      labelNames: ['operation', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    this.retries = registered(registry, Counter<'operation' | 'reason'>, {
      name: 'upstream_retries_total',
      help: 'Upstream retries scheduled, by operation and reason (the failed attempt status)',
      labelNames: ['operation', 'reason'] as const,
    });
    this.rateLimited = registered(registry, Counter<'operation'>, {
      name: 'upstream_rate_limited_total',
      help: 'Upstream 429 responses by operation',
      labelNames: ['operation'] as const,
    });
    this.circuitState = registered(registry, Gauge, {
      name: 'upstream_circuit_state',
      help: 'Upstream circuit breaker: 0 closed, 1 open, 2 half-open, 3 isolated',
    });
    this.rateLimit = registered(registry, Gauge, {
      name: 'upstream_rate_limit_per_second',
      help: 'Current request rate the adaptive upstream limiter allows (lowered on 429)',
    });
  }

  attempt(operation: UpstreamOperation, status: AttemptStatus, seconds: number): void {
    this.requests.inc({ operation, status });
    this.duration.observe({ operation, status }, seconds);
  }
}
