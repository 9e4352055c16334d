import type { ApiResponseSchemaHost } from '@nestjs/swagger';

type SchemaObject = Exclude<ApiResponseSchemaHost['schema'], { $ref: string }>;
import type { StatusReport } from './status.report';

const str = { type: 'string' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const nullable = (schema: SchemaObject): SchemaObject => ({ ...schema, nullable: true });
const num = { type: 'number' } as const;
const int = { type: 'integer' } as const;
const counts: SchemaObject = { type: 'object', additionalProperties: int };
const obj = (properties: Record<string, SchemaObject>): SchemaObject => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
});
const series: SchemaObject = {
  type: 'array',
  items: obj({
    label: str,
    points: { type: 'array', items: obj({ at: dateTime, value: nullable(num) }) },
  }),
};

/** `GET /v1/admin/status` (StatusReport, status.report.ts); docs/status.md says what each figure means. */
export const STATUS_REPORT_SCHEMA: SchemaObject = obj({
  generated_at: dateTime,
  window: obj({ from: dateTime, to: dateTime, minutes: int }),
  sync: obj({
    enabled: { type: 'boolean' },
    resources: {
      type: 'array',
      items: obj({
        resource: { type: 'string', enum: ['events', 'listings'] },
        last_pass: nullable(
          obj({
            id: str,
            status: { type: 'string', enum: ['running', 'completed', 'failed', 'cancelled'] },
            trigger: str,
            started_at: dateTime,
            finished_at: nullable(dateTime),
            items: int,
            items_per_second: nullable(num),
            failure_kind: nullable({
              type: 'string',
              enum: ['auth', 'config', 'upstream_unavailable', 'database', 'cancelled', 'other'],
            }),
            error: nullable(str),
          }),
        ),
        last_completed_at: nullable(dateTime),
        mirror_age_seconds: nullable(num),
        lag_seconds: nullable(num),
        next_pass_due_at: nullable(dateTime),
      }),
    },
    items_per_second: series,
  }),
  orders: obj({
    open_by_state: counts,
    final_24h: counts,
    oldest_open: nullable(obj({ id: str, state: str, age_seconds: num, attempt: int })),
    attempts_24h: counts,
    final_per_minute: series,
    time_to_final_ms: series,
  }),
  upstream: obj({
    requests_per_minute: series,
    errors_per_minute: series,
    by_operation: {
      type: 'array',
      items: obj({ operation: str, requests: int, errors: int, throttled: int }),
    },
    request_rate_per_second: num,
    key_check: obj({
      ok: { type: 'boolean' },
      environment: str,
      checked_at: dateTime,
      code: nullable(str),
      reason: nullable(str),
    }),
  }),
  catalog_accuracy: obj({
    sampling: { type: 'boolean' },
    sample_interval_ms: int,
    accuracy_now: nullable(num),
    window_samples: int,
    sampled_window: int,
    stale_window: int,
    accuracy_window: nullable(num),
    accuracy_per_minute: series,
    samples_per_minute: series,
    staleness_seconds: series,
  }),
  webhooks: obj({
    undelivered: int,
    failed_24h: int,
    endpoints: {
      type: 'array',
      items: obj({
        endpoint_id: str,
        undelivered: int,
        retrying: int,
        oldest_undelivered_age_seconds: nullable(num),
        failed_24h: int,
      }),
    },
  }),
  replicas: {
    type: 'array',
    items: obj({
      instance_id: str,
      version: str,
      started_at: dateTime,
      seen_at: dateTime,
      live: { type: 'boolean' },
    }),
  },
});

const points = (values: (number | null)[]) =>
  values.map((value, i) => ({ at: `2026-11-27T12:0${i}:00.000Z`, value }));

export const STATUS_REPORT_EXAMPLE: StatusReport = {
  generated_at: '2026-11-27T12:02:31.000Z',
  window: { from: '2026-11-27T11:03:00.000Z', to: '2026-11-27T12:03:00.000Z', minutes: 60 },
  sync: {
    enabled: true,
    resources: [
      {
        resource: 'events',
        last_pass: {
          id: '42',
          status: 'failed',
          trigger: 'schedule',
          started_at: '2026-11-27T12:01:00.000Z',
          finished_at: '2026-11-27T12:01:02.000Z',
          items: 0,
          items_per_second: 0,
          failure_kind: 'upstream_unavailable',
          error: 'UpstreamError: upstream listUpcomingEvents: HTTP 503',
        },
        last_completed_at: '2026-11-27T12:00:03.000Z',
        mirror_age_seconds: 151,
        lag_seconds: 148,
        next_pass_due_at: '2026-11-27T12:02:02.000Z',
      },
    ],
    items_per_second: [{ label: 'events', points: [{ at: '2026-11-27T12:00:03.000Z', value: 120.5 }] }],
  },
  orders: {
    open_by_state: { submitted: 3 },
    final_24h: { confirmed: 120, rejected: 4 },
    oldest_open: {
      id: '0b0c4ad6-6a53-4a1c-9f55-2b1f4c1e1a10',
      state: 'submitted',
      age_seconds: 12.4,
      attempt: 1,
    },
    attempts_24h: { '1': 122, '2': 2 },
    final_per_minute: [{ label: 'confirmed', points: points([2, 5, 1]) }],
    time_to_final_ms: [
      { label: 'p50', points: points([850, null, 910]) },
      { label: 'p99', points: points([2400, null, 2100]) },
    ],
  },
  upstream: {
    requests_per_minute: [{ label: 'getPurchaseStatus', points: points([30, 41, 12]) }],
    errors_per_minute: [
      { label: 'errors', points: points([0, 1, 0]) },
      { label: '429s', points: points([0, 0, 0]) },
    ],
    by_operation: [{ operation: 'getPurchaseStatus', requests: 83, errors: 1, throttled: 0 }],
    request_rate_per_second: 0.68,
    key_check: {
      ok: true,
      environment: 'sandbox',
      checked_at: '2026-11-27T12:02:00.000Z',
      code: null,
      reason: null,
    },
  },
  catalog_accuracy: {
    sampling: true,
    sample_interval_ms: 5000,
    accuracy_now: 0.98,
    window_samples: 100,
    sampled_window: 36,
    stale_window: 1,
    accuracy_window: 0.972,
    accuracy_per_minute: [{ label: 'buyable %', points: points([100, 91.7, 100]) }],
    samples_per_minute: [
      { label: 'sampled', points: points([12, 12, 12]) },
      { label: 'stale', points: points([0, 1, 0]) },
    ],
    staleness_seconds: [
      { label: 'cold', points: points([41.2, 55, 12.5]) },
      { label: 'hot', points: points([2.1, 1.8, 2.4]) },
    ],
  },
  webhooks: {
    undelivered: 2,
    failed_24h: 0,
    endpoints: [
      {
        endpoint_id: '7d2b8f7e-1f0a-4c55-8a8e-5b0f3f9f6c21',
        undelivered: 2,
        retrying: 1,
        oldest_undelivered_age_seconds: 34,
        failed_24h: 0,
      },
    ],
  },
  replicas: [
    {
      instance_id: 'host-a:4242:1f3c',
      version: '0.1.0',
      started_at: '2026-11-27T09:00:00.000Z',
      seen_at: '2026-11-27T12:02:30.000Z',
      live: true,
    },
  ],
};
