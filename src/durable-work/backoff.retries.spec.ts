import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckoutConfig } from '../config/checkout.config';
import { TransactionsConfig } from '../config/transactions.config';
import { orderBackoffSettings } from '../checkout/order.committer';
import { txBackoffSettings } from '../transactions/transactions.backoff';
import { backoffDelay } from './backoff.policy';
import { worstRetryDelay } from './backoff.retries';

const queues = [
  ['orders', orderBackoffSettings(new CheckoutConfig())],
  ['ledger', txBackoffSettings(new TransactionsConfig())],
] as const;

describe(worstRetryDelay.name, () => {
  it.each(queues)(
    'bounds every delay the %s queue draws, whatever the jitter and Retry-After',
    (_, settings) => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 40 }),
          fc.double({ min: 0, max: 0.999_999_9, noNaN: true }),
          fc.integer({ min: 0, max: 10 * settings.retryAfterCapMs }),
          (failures, random, retryAfterMs) => {
            const sut = worstRetryDelay(settings, failures);

            expect(backoffDelay(settings, failures, retryAfterMs, () => random)).toBeLessThanOrEqual(sut);
            expect(backoffDelay(settings, failures, 0, () => random)).toBeLessThanOrEqual(
              worstRetryDelay(settings, failures, false),
            );
          },
        ),
      );
    },
  );

  it.each(queues)(
    'is drawn by the %s queue: at the jitter top, and with a long Retry-After',
    (_, settings) => {
      for (let failures = 0; failures <= 8; failures++) {
        expect(backoffDelay(settings, failures, 0, () => 0.999_999_9)).toBe(
          worstRetryDelay(settings, failures, false),
        );
        expect(backoffDelay(settings, failures, 10 * settings.retryAfterCapMs, () => 0)).toBe(
          worstRetryDelay(settings, failures),
        );
      }
    },
  );
});
