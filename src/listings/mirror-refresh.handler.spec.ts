import fc from 'fast-check';
import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { U64_MAX } from '../common/int64';
import type {
  FinalHandlerOptions,
  TransactionRecord,
  TransactionsService,
} from '../transactions/transactions.service';
import type { EventRefresher } from './event-refresher';
import {
  eventsToRefresh,
  LISTING_INSTRUCTIONS,
  MirrorRefreshHandler,
  REFRESH_EVENT_MAX_ATTEMPTS,
  REFRESH_EVENT_ON_FINAL,
} from './mirror-refresh.handler';

const STATUSES = ['confirmed', 'landed_with_error', 'expired', 'processing', null] as const;
const u64 = fc.bigInt({ min: 0n, max: U64_MAX });

/** A stored record as the ledger keeps it: the canonical request, u64 as decimal strings. */
const record = (
  instruction: string,
  eventIds: readonly (string | number | null)[],
  status: (typeof STATUSES)[number] = 'confirmed',
): TransactionRecord =>
  ({
    status,
    instruction,
    custodialTransactionId: 'a'.repeat(64),
    request: {
      platformInstructions: {
        instruction,
        params: eventIds.map((event_id, i) => ({ event_id, ticket_id: String(i) })),
      },
    },
  }) as unknown as TransactionRecord;

describe(eventsToRefresh.name, () => {
  it('a confirmed list, cancel or buy touches each event of its batch once, in batch order', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LISTING_INSTRUCTIONS),
        fc.array(u64, { minLength: 1, maxLength: 10 }),
        (instruction, ids) => {
          const sut = eventsToRefresh(record(instruction, ids.map(String)));
          expect(sut).toEqual([...new Set(ids)]);
        },
      ),
    );
  });

  it('a transaction that is not confirmed changes no listing: nothing to refresh', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LISTING_INSTRUCTIONS),
        fc.constantFrom(...STATUSES.filter((s) => s !== 'confirmed')),
        fc.array(u64, { minLength: 1, maxLength: 5 }),
        (instruction, status, ids) => {
          expect(eventsToRefresh(record(instruction, ids.map(String), status))).toEqual([]);
        },
      ),
    );
  });

  it('another instruction, or a request without params, refreshes nothing', () => {
    expect(eventsToRefresh(record('some_future_instruction_v1', ['7']))).toEqual([]);
    expect(
      eventsToRefresh({
        status: 'confirmed',
        instruction: 'list_ticket_v2',
        request: {},
      }),
    ).toEqual([]);
    expect(
      eventsToRefresh({
        status: 'confirmed',
        instruction: 'list_ticket_v2',
        request: { platformInstructions: { params: 'x' } },
      } as unknown as TransactionRecord),
    ).toEqual([]);
  });

  it('skips event ids that are not u64 decimal strings instead of throwing', () => {
    expect(
      eventsToRefresh(
        record('cancel_listing_v1', ['12', null, 13, '-1', '1.5', (U64_MAX + 1n).toString(), '12', '007']),
      ),
    ).toEqual([12n, 7n]);
  });
});

function setup(passes: { status: string; error: string | null }[] = []) {
  const registered: {
    name: string;
    options?: FinalHandlerOptions;
    run: (r: TransactionRecord) => Promise<void>;
  }[] = [];
  const transactions = {
    registerFinalHandler: (
      name: string,
      run: (r: TransactionRecord) => Promise<void>,
      options?: FinalHandlerOptions,
    ) => registered.push({ name, run, options }),
  } as unknown as TransactionsService;
  const refreshed: bigint[] = [];
  const refresher: EventRefresher = {
    refreshEvent: (eventId) => {
      refreshed.push(eventId);
      return Promise.resolve(passes.shift() ?? { status: 'completed', error: null });
    },
  };
  vi.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  return { sut: new MirrorRefreshHandler(transactions, refresher), registered, refreshed };
}

describe(MirrorRefreshHandler.name, () => {
  it('registers listings.refresh-event for list, cancel and buy, with a bounded number of runs', () => {
    const { sut, registered } = setup();
    sut.onModuleInit();
    expect(registered.map((r) => [r.name, r.options])).toEqual([
      [
        REFRESH_EVENT_ON_FINAL,
        {
          instructions: ['list_ticket_v2', 'cancel_listing_v1', 'accept_offer_v2'],
          maxAttempts: REFRESH_EVENT_MAX_ATTEMPTS,
        },
      ],
    ]);
    expect(REFRESH_EVENT_ON_FINAL).toBe('listings.refresh-event');
  });

  it('refreshes every event the batch touched, each once', async () => {
    const { sut, refreshed } = setup();
    await sut.refresh(record('accept_offer_v2', ['5', '9', '5']));
    expect(refreshed).toEqual([5n, 9n]);
  });

  it('throws when a refresh pass did not complete, so the tracker runs it again', async () => {
    const { sut, refreshed } = setup([{ status: 'failed', error: 'UNAVAILABLE: 503' }]);
    await expect(sut.refresh(record('list_ticket_v2', ['5']))).rejects.toThrow(
      'mirror refresh of event 5 ended failed: UNAVAILABLE: 503',
    );
    expect(refreshed).toEqual([5n]);
  });

  it('refreshes nothing for a transaction that did not land', async () => {
    const { sut, refreshed } = setup();
    await sut.refresh(record('list_ticket_v2', ['5'], 'landed_with_error'));
    expect(refreshed).toEqual([]);
  });
});
