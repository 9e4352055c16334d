import { describe, expect, it } from 'vitest';
import { renderLogin, renderPage, renderPanels } from './status.page';
import type { StatusReport } from './status.report';

const at = (minute: number): string => new Date(Date.UTC(2026, 10, 27, 12, minute)).toISOString();
const line = (label: string, values: (number | null)[]) => ({
  label,
  points: values.map((value, m) => ({ at: at(m), value })),
});

function report(): StatusReport {
  return {
    generated_at: at(3),
    window: { from: at(0), to: at(4), minutes: 4 },
    sync: {
      enabled: true,
      resources: [
        {
          resource: 'events',
          last_pass: {
            id: '7',
            status: 'failed',
            trigger: 'schedule',
            started_at: at(1),
            finished_at: at(2),
            items: 10,
            items_per_second: 0.2,
            failure_kind: 'auth',
            error: 'UpstreamError: upstream listUpcomingEvents: 401: <rejected>',
          },
          last_completed_at: at(0),
          mirror_age_seconds: 200,
          lag_seconds: 180,
          next_pass_due_at: at(4),
        },
        {
          resource: 'listings',
          last_pass: null,
          last_completed_at: null,
          mirror_age_seconds: null,
          lag_seconds: null,
          next_pass_due_at: null,
        },
      ],
      items_per_second: [line('events', [5, 6]), line('listings', [])],
    },
    orders: {
      open_by_state: { submitted: 3, signing: 1 },
      final_24h: { confirmed: 12, rejected: 2 },
      oldest_open: { id: 'o-1', state: 'submitted', age_seconds: 42, attempt: 2 },
      attempts_24h: { '1': 13, '2': 1 },
      final_per_minute: [line('confirmed', [1, 2, 3, 4])],
      time_to_final_ms: [line('p50', [100, null, 120, 130]), line('p99', [300, null, 320, 330])],
    },
    upstream: {
      requests_per_minute: [line('getPurchaseStatus', [10, 12, 9, 11])],
      errors_per_minute: [line('errors', [0, 1, 0, 0]), line('429s', [0, 0, 0, 0])],
      by_operation: [{ operation: 'getPurchaseStatus', requests: 42, errors: 1, throttled: 0 }],
      request_rate_per_second: 0.18,
      key_check: { ok: true, environment: 'sandbox', checked_at: at(3), code: null, reason: null },
    },
    catalog_accuracy: {
      sampling: true,
      sample_interval_ms: 5000,
      accuracy_now: 0.97,
      window_samples: 100,
      sampled_window: 48,
      stale_window: 2,
      accuracy_window: 0.958,
      accuracy_per_minute: [line('buyable %', [100, 91.7, null, 100])],
      samples_per_minute: [line('sampled', [12, 12, 0, 12]), line('stale', [0, 1, 0, 0])],
      staleness_seconds: [line('hot', [2, 3, null, 2]), line('cold', [40, 41, null, 50])],
    },
    webhooks: {
      undelivered: 4,
      failed_24h: 1,
      endpoints: [
        {
          endpoint_id: 'e-1',
          undelivered: 4,
          retrying: 2,
          oldest_undelivered_age_seconds: 95,
          failed_24h: 1,
        },
      ],
    },
    replicas: [
      { instance_id: 'host-1:123', version: '0.1.0', started_at: at(0), seen_at: at(3), live: true },
    ],
  };
}

describe(renderPanels.name, () => {
  it('has the six panels, each with its figures', () => {
    const sut = renderPanels(report());
    for (const panel of ['sync', 'orders', 'upstream', 'accuracy', 'webhooks', 'replicas']) {
      expect(sut).toContain(`data-panel="${panel}"`);
    }
    expect(sut).toContain('auth');
    expect(sut).toContain('submitted');
    expect(sut).toContain('o-1');
    expect(sut).toContain('getPurchaseStatus');
    expect(sut).toContain('host-1:123');
    expect(sut).toContain('e-1');
    expect(sut).toContain('1m 35s');
    expect(sut).toContain('95.8 %');
    expect(sut).toContain('97 % of its last 100 samples');
  });

  it("names the window the upstream table's requests, errors and 429s are counted over", () => {
    expect(renderPanels(report())).toContain('By operation, last 4 min (every replica)');
  });

  it('draws the eight plots: sync items/s, finals, time to final, upstream requests and errors, accuracy, samples, data age', () => {
    const sut = renderPanels(report());
    expect(sut.match(/<figure class="plot"/g)).toHaveLength(8);
    expect(sut).toContain('data-plot="Served listings still buyable at the served price"');
  });

  it('says so instead of drawing an empty data-age plot when no staleness was recorded, or sampling is off', () => {
    const r = report();
    r.catalog_accuracy = {
      ...r.catalog_accuracy,
      sampling: false,
      accuracy_now: null,
      staleness_seconds: [],
    };
    const sut = renderPanels(r);
    expect(sut.match(/<figure class="plot"/g)).toHaveLength(7);
    expect(sut).toContain('No served-data age recorded (mirror_staleness_seconds).');
    expect(sut).toContain('not sampling (MIRROR_ACCURACY_SAMPLE_INTERVAL_MS=0)');
  });

  it('never lets a recorded error text become markup', () => {
    const sut = renderPanels(report());
    expect(sut).not.toContain('<rejected>');
    expect(sut).toContain('&lt;rejected&gt;');
  });
});

describe(renderPage.name, () => {
  it('is a whole document loading its style and script from the service, no inline script', () => {
    const sut = renderPage(report());
    expect(sut).toMatch(/^<!doctype html>/);
    expect(sut).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(sut).toContain('<link rel="stylesheet" href="/status/assets/status.css">');
    expect(sut).toContain('<script src="/status/assets/status.js" defer></script>');
    expect(sut).not.toMatch(/<script>|https?:\/\//);
  });
});

describe(renderLogin.name, () => {
  it('asks for the key in a password field posted by the script, never in a URL', () => {
    const sut = renderLogin();
    expect(sut).toContain('type="password"');
    expect(sut).toContain('id="login"');
    expect(sut).not.toMatch(/method="get"|action="[^"]*\?/i);
    expect(sut).toContain('<script src="/status/assets/status.js" defer></script>');
  });
});
