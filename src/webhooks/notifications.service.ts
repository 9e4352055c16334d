import { Injectable } from '@nestjs/common';
import type { ClientContext } from '../auth/client-context';
import { AppError } from '../common/app-error';
import { KeysetCursorCodec, type CursorBinding } from '../common/keyset-cursor';
import { WebhooksConfig } from '../config/webhooks.config';
import { envelopeOf, OutboxRepository, type FeedPosition } from './outbox.repository';
import type { EventEnvelope } from './webhook-events';
import { WebhooksErrors } from './webhooks.errors';

export interface FeedPage {
  /** The same envelopes the webhooks carry (same ids, same JSON), in feed order. */
  items: EventEnvelope[];
  /**
   * Resume here (`?after=`): the last item's position, or the `after` given when nothing new has committed yet.
   * Null only when the feed has never had an event for the caller and no `after` was given.
   */
  next_cursor: string | null;
  /** More events are already available after `next_cursor`. */
  has_more: boolean;
}

const START: FeedPosition = { xactId: '0', position: '0' };
const DIGITS = /^[0-9]{1,20}$/;

function compare(a: FeedPosition, b: FeedPosition): number {
  const x = BigInt(a.xactId) - BigInt(b.xactId);
  if (x !== 0n) return x < 0n ? -1 : 1;
  const p = BigInt(a.position) - BigInt(b.position);
  return p === 0n ? 0 : p < 0n ? -1 : 1;
}

/**
 * The catch-up feed (`GET /v1/notifications`): the caller's events (an admin's: also operator events) in the
 * order of their writing transactions' ids, served only below the oldest transaction still running, so an event
 * can never commit behind a cursor already handed out (gap-free). Cursors are signed and bound to the client.
 */
@Injectable()
export class NotificationsService {
  constructor(
    private readonly outbox: OutboxRepository,
    private readonly cursors: KeysetCursorCodec,
    private readonly config: WebhooksConfig,
  ) {}

  async feed(client: ClientContext, after: string | undefined, limit: number): Promise<FeedPage> {
    const binding: CursorBinding = { sort: 'feed', filters: { client: client.id } };
    const from = after === undefined ? START : this.decode(after, binding);
    const horizon = await this.outbox.horizon();
    if (horizon && after !== undefined && compare(from, horizon) < 0)
      throw WebhooksErrors.cursorExpired(this.encode(horizon, binding), this.config.WEBHOOKS_RETENTION_DAYS);
    const rows = await this.outbox.feed(client.id, client.scopes.includes('admin'), from, limit + 1);
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    const next = last
      ? this.encode({ xactId: last.xact_id, position: last.position }, binding)
      : (after ?? null);
    return { items: items.map(envelopeOf), next_cursor: next, has_more: rows.length > limit };
  }

  private encode(position: FeedPosition, binding: CursorBinding): string {
    return this.cursors.encode([position.xactId, position.position], binding);
  }

  private decode(cursor: string, binding: CursorBinding): FeedPosition {
    try {
      const [xactId, position] = this.cursors.decode(cursor, binding);
      if (
        typeof xactId === 'string' &&
        typeof position === 'string' &&
        DIGITS.test(xactId) &&
        DIGITS.test(position)
      )
        return { xactId, position };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
    }
    throw WebhooksErrors.badCursor('after');
  }
}
