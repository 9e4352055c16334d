import { Inject, Injectable } from '@nestjs/common';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import type { ListingRow } from '../catalog-sync/catalog-mirror.types';
import { TurnBatch } from '../common/turn-batch';

/** Most keys read in one statement (larger bursts become several statements, sent together). */
export const LISTING_BATCH_MAX_KEYS = 64;

/**
 * Most statements of one reader out at once (TurnBatch `inFlight`): reads asked meanwhile go together when the
 * first of them answers (2 of the pool's 10 by default: a slow statement does not hold every read up).
 */
export const LISTING_READS_IN_FLIGHT = 2;

/**
 * Coalesces the single-listing reads asked for in the same turn of the event loop into one round trip
 * (`listingsByKey`: one primary-key probe per key; common/turn-batch.ts). A lone read uses `listing` (the plain
 * primary-key statement).
 */
@Injectable()
export class ListingBatchReader {
  private readonly batch: TurnBatch<readonly [string, string], ListingRow | undefined>;

  constructor(
    /** One listing (`listing`) or a batch by key (`listingsByKey`). */
    @Inject(CatalogMirrorService)
    mirror: Pick<CatalogMirrorService, 'listing' | 'listingsByKey'>,
  ) {
    this.batch = new TurnBatch(
      {
        one: ([eventId, ticketId]) => mirror.listing(eventId, ticketId),
        many: async (keys) => {
          const rows = await mirror.listingsByKey(keys);
          const byKey = new Map(rows.map((row) => [`${row.event_id}/${row.ticket_id}`, row]));
          return keys.map(([eventId, ticketId]) => byKey.get(`${eventId}/${ticketId}`));
        },
      },
      { max: LISTING_BATCH_MAX_KEYS, inFlight: LISTING_READS_IN_FLIGHT },
    );
  }

  read(eventId: string, ticketId: string): Promise<ListingRow | undefined> {
    return this.batch.read([eventId, ticketId]);
  }
}
