import { AppError } from '../common/app-error';
import { validationFailed } from '../common/validation';

export const WebhooksErrors = {
  endpointNotFound: (): AppError => new AppError('NOT_FOUND', 'Webhook endpoint not found'),
  deliveryNotFound: (): AppError => new AppError('NOT_FOUND', 'Delivery not found'),
  tooManyEndpoints: (max: number): AppError =>
    new AppError('CONFLICT', `This client already has ${max} webhook endpoints; delete one first`, {
      limit: max,
    }),
  endpointDisabled: (): AppError =>
    new AppError('CONFLICT', 'The endpoint is disabled: enable it (PATCH enabled=true) first'),
  deliveryBusy: (): AppError =>
    new AppError(
      'CONFLICT',
      'The delivery is being sent right now; retry when it has finished',
      undefined,
      5,
    ),
  /** 429: the endpoint's pings and manual retries of this minute are spent (WEBHOOKS_MANUAL_SENDS_PER_MINUTE). */
  manualSendsLimited: (perMinute: number, retryAfterSeconds: number): AppError =>
    new AppError(
      'RATE_LIMITED',
      `This endpoint accepts ${perMinute} pings and manual retries per minute; try again later`,
      { limit: perMinute },
      retryAfterSeconds,
    ),
  /** 400 naming `since`: a recover's start is in the future or before what the outbox keeps. */
  badSince: (problem: string): AppError => validationFailed([{ field: 'since', problems: [problem] }]),
  badUrl: (problems: string[]): AppError => validationFailed([{ field: 'url', problems }]),
  operatorTypes: (types: string[]): AppError =>
    validationFailed([
      { field: 'event_types', problems: [`${types.join(', ')}: operator events reach admin clients only`] },
    ]),
  badCursor: (field: string): AppError =>
    validationFailed([{ field, problems: [`${field} is not a valid cursor for this feed`] }]),
  /** 410: the cursor's position was pruned; `oldest_cursor` resumes from the oldest event kept. */
  cursorExpired: (oldestCursor: string, retentionDays: number): AppError =>
    new AppError(
      'GONE',
      `Events after this cursor are older than the retention (${retentionDays} days) and were deleted; resume from oldest_cursor`,
      { oldest_cursor: oldestCursor },
    ),
};
