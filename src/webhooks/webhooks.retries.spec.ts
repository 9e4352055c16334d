import { describe, expect, it } from 'vitest';
import { WebhooksConfig } from '../config/webhooks.config';
import { afterFailure } from './delivery.schedule';
import { webhookDeliveryWorstCase, webhooksRetries } from './webhooks.retries';

/** Runs the real schedule against a receiver that never answers, each delay drawn by `random`. */
function failEveryTry(config: WebhooksConfig, random: () => number): { tries: number; elapsedMs: number } {
  let tries = 0;
  let elapsedMs = 0;
  for (;;) {
    // A due delivery waits up to one worker pass, then its send lasts up to the timeout.
    elapsedMs += config.WEBHOOKS_WORKER_INTERVAL_MS + config.WEBHOOKS_DELIVERY_TIMEOUT_MS;
    tries++;
    const next = afterFailure(tries, random);
    if (next.kind === 'failed') return { tries, elapsedMs };
    elapsedMs += next.delayMs;
    if (tries > 100) throw new Error('the schedule never ends');
  }
}

describe(webhookDeliveryWorstCase.name, () => {
  it('is the real schedule at the top of its jitter', () => {
    const config = new WebhooksConfig();
    const model = webhookDeliveryWorstCase({ webhooks: config });

    const sut = failEveryTry(config, () => 0.999_999_999);

    expect(sut.tries).toBe(model.tries);
    expect(model.time.value).toBeGreaterThanOrEqual(sut.elapsedMs);
    expect((model.time.value ?? 0) - sut.elapsedMs).toBeLessThanOrEqual(model.tries);
  });

  it('bounds the schedule at any jitter', () => {
    const config = Object.assign(new WebhooksConfig(), { WEBHOOKS_DELIVERY_TIMEOUT_MS: 30_000 });
    const model = webhookDeliveryWorstCase({ webhooks: config });

    for (const random of [0, 0.3, 0.7])
      expect(failEveryTry(config, () => random).elapsedMs).toBeLessThanOrEqual(model.time.value ?? 0);
  });
});

describe(webhooksRetries.name, () => {
  it('lists the schedule between the worker settings and the endpoint settings', () => {
    const names = webhooksRetries(new WebhooksConfig()).map((setting) => setting.name);

    expect(names.indexOf('retry 1')).toBeGreaterThan(names.indexOf('WEBHOOKS_WORKER_INTERVAL_MS'));
    expect(names.indexOf('WEBHOOKS_DISABLE_AFTER_HOURS')).toBeGreaterThan(names.indexOf('retry 7'));
  });
});
