import { Inject, Injectable } from '@nestjs/common';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import type { ListingRow, ListingsQuery } from '../catalog-sync/catalog-mirror.types';
import { TurnBatch } from '../common/turn-batch';
import { LISTING_BATCH_MAX_KEYS, LISTING_READS_IN_FLIGHT } from './listing-batch.reader';

/**
 * Coalesces the pages of one event's listings (`GET /v1/events/{event_id}/listings`) asked for in the same turn of
 * the event loop into one round trip per statement shape (`listingsPageShape`: sort, filters present, with or without a
 * cursor; common/turn-batch.ts):
 * each page is still its own index range scan, run in one statement (`listingsPages`). A lone page is the plain
 * statement (`listingsPage`). Pages across events (`GET /v1/listings`) are not batched here: their
 * plan depends on the values, so they stay one unprepared statement each.
 */
@Injectable()
export class ListingPageBatchReader {
  private readonly batch: TurnBatch<ListingsQuery, ListingRow[]>;

  constructor(
    @Inject(CatalogMirrorService)
    private readonly mirror: Pick<
      CatalogMirrorService,
      'listingsPage' | 'listingsPages' | 'listingsPageShape'
    >,
  ) {
    this.batch = new TurnBatch(
      {
        one: (query) => mirror.listingsPage(query),
        many: async (queries) => {
          const pages = await mirror.listingsPages(queries);
          return queries.map((_, i) => pages[i] ?? []);
        },
      },
      {
        max: LISTING_BATCH_MAX_KEYS,
        groupOf: (query) => mirror.listingsPageShape(query),
        inFlight: LISTING_READS_IN_FLIGHT,
      },
    );
  }

  /** One event's page (`query.eventId` set), as `listingsPage` reads it. */
  read(query: ListingsQuery): Promise<ListingRow[]> {
    if (query.eventId === undefined) return this.mirror.listingsPage(query);
    return this.batch.read(query);
  }
}
