import { Inject, Injectable } from '@nestjs/common';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import type { ListingRow, ListingsQuery } from '../catalog-sync/catalog-mirror.types';
import { LISTING_BATCH_MAX_KEYS } from './listing-batch.reader';

interface PendingPage {
  query: ListingsQuery;
  resolve: (rows: ListingRow[]) => void;
  reject: (error: unknown) => void;
}

/** What decides a page statement's text (CatalogMirrorRepository.listingsPages): pages of one shape share one. */
function shapeOf(query: ListingsQuery): string {
  return `${query.sort}|${query.minPrice === undefined ? '' : 'min'}|${query.maxPrice === undefined ? '' : 'max'}|${query.after === undefined ? '' : 'after'}`;
}

/**
 * Coalesces the pages of one event's listings (`GET /v1/events/{event_id}/listings`) asked for in the same turn of
 * the event loop into one round trip per shape (sort, filters present, with or without a cursor): each page is
 * still its own index range scan, run in one statement (`listingsPages`). As for single listings
 * (listing-batch.reader.ts), every read goes to PostgreSQL after it was asked for and nothing is kept between
 * turns — it is not a cache; requests that arrived together share a pooled connection, a statement and a round
 * trip instead of each queueing for the pool. A lone page is the plain statement (`listingsPage`). A failed
 * statement fails every page of its batch. Pages across events (`GET /v1/listings`) are not batched here: their
 * plan depends on the values, so they stay one unprepared statement each.
 */
@Injectable()
export class ListingPageBatchReader {
  private pending = new Map<string, PendingPage[]>();
  private scheduled = false;

  constructor(
    @Inject(CatalogMirrorService)
    private readonly mirror: Pick<CatalogMirrorService, 'listingsPage' | 'listingsPages'>,
  ) {}

  /** One event's page (`query.eventId` set), as `listingsPage` reads it. */
  read(query: ListingsQuery): Promise<ListingRow[]> {
    if (query.eventId === undefined) return this.mirror.listingsPage(query);
    return new Promise((resolve, reject) => {
      const shape = shapeOf(query);
      const same = this.pending.get(shape);
      if (same) same.push({ query, resolve, reject });
      else this.pending.set(shape, [{ query, resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        // After the poll phase: every request that arrived in this turn has asked by then.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const groups = this.pending;
    this.pending = new Map();
    for (const pages of groups.values()) {
      for (let start = 0; start < pages.length; start += LISTING_BATCH_MAX_KEYS) {
        this.send(pages.slice(start, start + LISTING_BATCH_MAX_KEYS));
      }
    }
  }

  private send(pages: PendingPage[]): void {
    const [only] = pages;
    if (pages.length === 1 && only) {
      this.mirror.listingsPage(only.query).then(only.resolve, only.reject);
      return;
    }
    this.mirror.listingsPages(pages.map((p) => p.query)).then(
      (rows) => {
        pages.forEach((page, i) => page.resolve(rows[i] ?? []));
      },
      (error: unknown) => {
        for (const page of pages) page.reject(error);
      },
    );
  }
}
