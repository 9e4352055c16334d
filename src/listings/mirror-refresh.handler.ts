import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { isU64 } from '../common/int64';
import { TransactionsService, type TransactionRecord } from '../transactions/transactions.service';
import type { InstructionName } from '../upstream/upstream.types';
import { EVENT_REFRESHER, type EventRefresher } from './event-refresher';

/** The after-final handler's name, stored on ledger rows (selling's and the signing routes'): never rename it. */
export const REFRESH_EVENT_ON_FINAL = 'listings.refresh-event';

/**
 * Runs of one transaction's refresh before the tracker gives up on it (the ledger's backoff between runs: at most
 * 26 s of waits with the default settings, docs/RETRIES.md). The mirror then catches up at the next scheduled
 * listings pass.
 */
export const REFRESH_EVENT_MAX_ATTEMPTS = 8;

/** The instructions that change an event's listings on the ledger: list, cancel, buy. */
export const LISTING_INSTRUCTIONS: readonly InstructionName[] = [
  'list_ticket_v2',
  'cancel_listing_v1',
  'accept_offer_v2',
];

const U64_TEXT = /^[0-9]{1,20}$/;

/**
 * The events whose listings a final transaction changed, each once, in batch order: none unless it is
 * `confirmed` (landed_with_error and expired change nothing on the ledger) and one of LISTING_INSTRUCTIONS;
 * otherwise every event_id of its batch (each element of all three names its event: contract 2.2). Read from the
 * stored canonical request (u64 as decimal strings); anything else there is skipped, never thrown on.
 */
export function eventsToRefresh(
  record: Pick<TransactionRecord, 'status' | 'instruction' | 'request'>,
): bigint[] {
  if (record.status !== 'confirmed' || !LISTING_INSTRUCTIONS.includes(record.instruction)) return [];
  const params = (record.request as { platformInstructions?: { params?: unknown } } | null)
    ?.platformInstructions?.params;
  if (!Array.isArray(params)) return [];
  const events = new Map<string, bigint>();
  for (const element of params as unknown[]) {
    const id = (element as { event_id?: unknown } | null)?.event_id;
    if (typeof id !== 'string' || !U64_TEXT.test(id)) continue;
    const value = BigInt(id);
    if (isU64(value) && !events.has(value.toString())) events.set(value.toString(), value);
  }
  return [...events.values()];
}

/**
 * Read-your-writes for every route that changes listings: the after-final handler `listings.refresh-event`
 * refreshes, in the mirror, each event a confirmed list / cancel / buy touched. Selling names it on its records,
 * and the signing routes of transactions/ record it for these instructions (registered here, because listings/
 * owns the mirror's consumers and transactions/ must not import it). Checkout's buys name checkout's own handler
 * and checkout refreshes itself, so nothing is refreshed twice. At least once and idempotent (a refresh pass is a
 * walk of the event's listings now); a pass that does not complete throws, so the tracker retries it.
 */
@Injectable()
export class MirrorRefreshHandler implements OnModuleInit {
  private readonly logger = new Logger(MirrorRefreshHandler.name);

  constructor(
    private readonly transactions: TransactionsService,
    @Inject(EVENT_REFRESHER) private readonly refresher: EventRefresher,
  ) {}

  onModuleInit(): void {
    this.transactions.registerFinalHandler(REFRESH_EVENT_ON_FINAL, (record) => this.refresh(record), {
      instructions: LISTING_INSTRUCTIONS,
      maxAttempts: REFRESH_EVENT_MAX_ATTEMPTS,
    });
  }

  /** Refreshes every event the confirmed transaction touched; throws when a refresh did not complete. */
  async refresh(record: TransactionRecord): Promise<void> {
    for (const eventId of eventsToRefresh(record)) {
      const pass = await this.refresher.refreshEvent(eventId);
      if (pass.status !== 'completed')
        throw new Error(
          `mirror refresh of event ${eventId} ended ${pass.status}${pass.error ? `: ${pass.error}` : ''}`,
        );
      this.logger.log(
        { eventId: eventId.toString(), transactionId: record.custodialTransactionId },
        'mirror event refreshed',
      );
    }
  }
}
