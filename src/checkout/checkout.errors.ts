import { AppError } from '../common/app-error';
import { badIdempotencyKey } from '../common/idempotency-key';
import { validationFailed } from '../common/validation';

/** Failure codes an order can end with (`failure.code` of the response). */
export const ORDER_FAILURE_CODES = [
  'LISTING_GONE',
  'PRICE_CHANGED',
  'LISTING_RESTRICTED',
  'SIGNING_REJECTED',
  'LANDED_WITH_ERROR',
  'ATTEMPTS_EXHAUSTED',
  'UPSTREAM_UNAVAILABLE',
] as const;
export type OrderFailureCode = (typeof ORDER_FAILURE_CODES)[number];

export const CheckoutErrors = {
  badIdempotencyKey,
  keyReused: (): AppError =>
    new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was already used with a different order body',
    ),
  notFound: (): AppError => new AppError('NOT_FOUND', 'Order not found'),
  openOrdersLimit: (max: number): AppError =>
    new AppError(
      'BUYER_OPEN_ORDERS_LIMIT',
      `This buyer already has ${max} open orders; wait for one to finish`,
      { limit: max },
      5,
    ),
  eventLimit: (max: number, windowSeconds: number): AppError =>
    new AppError(
      'BUYER_EVENT_LIMIT',
      `This buyer has reached ${max} orders for this event within ${windowSeconds} s`,
      { limit: max, windowSeconds },
    ),
  badWait: (maxMs: number): AppError =>
    validationFailed([
      {
        field: 'wait',
        problems: [`wait must be a duration like 5s or 500ms, at most ${maxMs} ms`],
      },
    ]),
  badCursor: (): AppError =>
    validationFailed([{ field: 'cursor', problems: ['cursor is not a valid cursor for this query'] }]),
};
