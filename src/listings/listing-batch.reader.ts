import { Inject, Injectable } from '@nestjs/common';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import type { ListingRow } from '../catalog-sync/catalog-mirror.types';

/** Most keys read in one statement (larger bursts become several statements, sent together). */
export const LISTING_BATCH_MAX_KEYS = 64;

interface PendingRead {
  key: string;
  eventId: string;
  ticketId: string;
  resolve: (row: ListingRow | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces the single-listing reads asked for in the same turn of the event loop into one round trip
 * (`listingsByKey`: one primary-key probe per key). Every read still goes to PostgreSQL after it was asked
 * for — nothing is kept between turns, so it is not a cache: under load, requests that arrived together
 * share a connection and a round trip instead of queueing for the pool one by one. A lone read uses
 * `listing` (the plain primary-key statement). A failed statement fails every read of its batch.
 */
@Injectable()
export class ListingBatchReader {
  private pending: PendingRead[] = [];
  private scheduled = false;

  constructor(
    /** One listing (`listing`) or a batch by key (`listingsByKey`). */
    @Inject(CatalogMirrorService)
    private readonly mirror: Pick<CatalogMirrorService, 'listing' | 'listingsByKey'>,
  ) {}

  read(eventId: string, ticketId: string): Promise<ListingRow | undefined> {
    return new Promise((resolve, reject) => {
      this.pending.push({ key: `${eventId}/${ticketId}`, eventId, ticketId, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the poll phase: every request that arrived in this turn has asked by then.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    for (let start = 0; start < batch.length; start += LISTING_BATCH_MAX_KEYS) {
      this.send(batch.slice(start, start + LISTING_BATCH_MAX_KEYS));
    }
  }

  private send(reads: PendingRead[]): void {
    const [only] = reads;
    if (reads.length === 1 && only) {
      this.mirror.listing(only.eventId, only.ticketId).then(only.resolve, only.reject);
      return;
    }
    this.mirror.listingsByKey(reads.map((r) => [r.eventId, r.ticketId] as const)).then(
      (rows) => {
        const byKey = new Map(rows.map((row) => [`${row.event_id}/${row.ticket_id}`, row]));
        for (const read of reads) read.resolve(byKey.get(read.key));
      },
      (error: unknown) => {
        for (const read of reads) read.reject(error);
      },
    );
  }
}
