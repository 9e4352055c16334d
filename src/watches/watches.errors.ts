import { AppError } from '../common/app-error';
import { validationFailed } from '../common/validation';

export const WatchesErrors = {
  notFound: (): AppError => new AppError('NOT_FOUND', 'Watch not found'),
  tooMany: (max: number): AppError =>
    new AppError('CONFLICT', `This client already has ${max} unexpired watches; delete one first`, {
      limit: max,
    }),
  /** 400 naming `event_id`: neither or both of `event_id` and `q`. */
  target: (): AppError =>
    validationFailed([{ field: 'event_id', problems: ['give exactly one of event_id and q'] }]),
  /** 400 naming `max_price_minor`: a watch needs a price to watch for. */
  condition: (): AppError =>
    validationFailed([
      {
        field: 'max_price_minor',
        problems: ['give max_price_minor, min_drop_percent or both (a watch alerts on a price)'],
      },
    ]),
  noEventMatches: (): AppError =>
    validationFailed([{ field: 'q', problems: ['no active event in the catalog has a name containing q'] }]),
  ambiguous: (candidates: { event_id: string; name: string }[], more: boolean): AppError =>
    validationFailed([
      {
        field: 'q',
        problems: [
          `q matches ${more ? 'more than ' : ''}${candidates.length} events; create the watch with one event_id: ` +
            candidates.map((c) => `${c.event_id} (${JSON.stringify(c.name)})`).join(', '),
        ],
      },
    ]),
  expiresInPast: (): AppError =>
    validationFailed([{ field: 'expires_at', problems: ['expires_at must be in the future'] }]),
  expiresTooFar: (days: number): AppError =>
    validationFailed([{ field: 'expires_at', problems: [`expires_at must be at most ${days} days ahead`] }]),
  badCursor: (): AppError =>
    validationFailed([{ field: 'cursor', problems: ['cursor is not a valid cursor for this list'] }]),
};
