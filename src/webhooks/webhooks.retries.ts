import type { WebhooksConfig } from '../config/webhooks.config';
import { constantSetting, describedSettings, type RetryDescription } from '../config/retry-description';
import { finite, num, type Bound } from '../common/worst-case';
import { MAX_DELIVERY_ATTEMPTS, RETRY_JITTER, RETRY_SCHEDULE_MS, retryCeilingMs } from './delivery.schedule';
import { PRUNE_MAX_BATCHES } from './outbox.pruner';
import { PRUNE_BATCH } from './outbox.repository';

/** The webhooks' retry-like settings and fixed retry schedule (docs/RETRIES.md), variables from `w`. */
export function webhooksRetries(w: WebhooksConfig): RetryDescription[] {
  const settings = describedSettings(w, 'webhooks', 'webhooks.config.ts').map((setting) =>
    setting.name === 'WEBHOOKS_PRUNE_INTERVAL_MS'
      ? {
          ...setting,
          bounds: `${setting.bounds} (each at most ${PRUNE_MAX_BATCHES} batches of ${num(PRUNE_BATCH)} events)`,
        }
      : setting,
  );
  const last = RETRY_SCHEDULE_MS.length - 1;
  const schedule = RETRY_SCHEDULE_MS.map((delay, i) =>
    constantSetting('webhooks', `retry ${i + 1}`, delay, {
      unit: 'ms',
      bounds:
        `delay after failed try ${i + 1} (± ${RETRY_JITTER * 100} % jitter)` +
        (i === last ? `; a failure of try ${MAX_DELIVERY_ATTEMPTS} marks the delivery failed` : ''),
      where: 'src/webhooks/delivery.schedule.ts `RETRY_SCHEDULE_MS`',
    }),
  );
  // The schedule is listed after the worker's settings, before retention (as the delivery's life runs).
  const split = settings.findIndex((setting) => setting.name === 'WEBHOOKS_DISABLE_AFTER_HOURS');
  return split < 0
    ? [...settings, ...schedule]
    : [...settings.slice(0, split), ...schedule, ...settings.slice(split)];
}

/** One webhook delivery, from its append (or a manual retry) to `failed`, against a receiver that never answers. */
export interface WebhookDeliveryWorstCase {
  tries: number;
  /** Sum of the jittered schedule's ceilings, the timeout of every try and a worker interval before each. */
  time: Bound;
}

export function webhookDeliveryWorstCase(config: { webhooks: WebhooksConfig }): WebhookDeliveryWorstCase {
  const w = config.webhooks;
  const tries = MAX_DELIVERY_ATTEMPTS;
  const waits = RETRY_SCHEDULE_MS.reduce((sum, _delay, i) => sum + retryCeilingMs(i + 1), 0);
  const perTry = w.WEBHOOKS_WORKER_INTERVAL_MS + w.WEBHOOKS_DELIVERY_TIMEOUT_MS;
  return {
    tries,
    time: finite(
      waits + tries * perTry,
      `schedule with jitter ${num(waits)} + ${tries} × (worker interval ${num(w.WEBHOOKS_WORKER_INTERVAL_MS)} + timeout ${num(w.WEBHOOKS_DELIVERY_TIMEOUT_MS)})`,
    ),
  };
}
