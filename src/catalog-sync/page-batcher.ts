import type { SkipReason } from './catalog-sync.mapper';
import type { EventBatch } from './event.repository';
import type { ListingBatch } from './listing-batch';

/** A pass's running counts (pages read, items seen, rows written, items skipped for missing identifiers). */
export interface PassTotals {
  pages: number;
  items: number;
  upserted: number;
  skipped: number;
}

/** Pages mapped but not written yet; written together once they hold enough rows or waited long enough. */
export interface PageBatch {
  data: EventBatch | ListingBatch;
  pageCount: number;
  items: number;
  skippedCount: number;
  skipped: Partial<Record<SkipReason, number>>;
  startedAt: number;
}

/** One mapped page as the batcher takes it. */
export interface BatchedPage {
  rows: readonly unknown[];
  items: number;
  skippedCount: number;
  skipped: Partial<Record<SkipReason, number>>;
  observedAt: Date;
}

export interface PageBatcherOptions {
  /** Two holders, used in turn: one filled while the other is written (their buffers are reused). */
  holders: [EventBatch | ListingBatch, EventBatch | ListingBatch];
  /** A batch is written once it holds this many rows (SYNC_WRITE_BATCH_ROWS)… */
  batchRows: number;
  /** …or once its first page has waited this long. */
  maxDelayMs: number;
  /** Writes one batch (one transaction) and answers how many rows it changed. */
  write: (batch: PageBatch) => Promise<number>;
  /** After a batch is written (metrics, logs); `totals` already counts it. */
  written: (batch: PageBatch, rows: number, totals: PassTotals) => void;
}

/** Adds per-reason skip counts into `into`. */
export function addSkipped(
  into: Partial<Record<SkipReason, number>>,
  counts: Partial<Record<SkipReason, number>>,
): void {
  for (const [reason, n] of Object.entries(counts) as [SkipReason, number][]) {
    into[reason] = (into[reason] ?? 0) + n;
  }
}

/**
 * The write side of a pass (sync-pass.runner.ts): collects mapped pages into batches and writes each batch while
 * the next one is mapped — at most one batch in flight, so memory stays at two batches. A page whose key is
 * already in the batch writes the batch first (one upsert cannot touch a row twice). A failed write fails the
 * pass at the next flush.
 */
export class PageBatcher {
  readonly totals: PassTotals = { pages: 0, items: 0, upserted: 0, skipped: 0 };
  readonly skippedByReason: Partial<Record<SkipReason, number>> = {};
  /** Time spent waiting for a batch in flight (the pass's `write` stage). */
  writeMs = 0;
  private turn = 0;
  private batch: PageBatch;
  /**
   * The batch being written (at most one). Typed by a cast: it is assigned only inside flush(), so a plain
   * `null` initializer would leave tsc narrowing it to null.
   */
  private inFlight = null as Promise<void> | null;

  constructor(private readonly options: PageBatcherOptions) {
    this.batch = this.newBatch();
  }

  /** Adds a page; writes the batch first when one of the page's keys is in it, and once it is big or old. */
  async add(page: BatchedPage): Promise<void> {
    const rows = page.rows as never[];
    if (!this.batch.data.add(rows, page.observedAt)) {
      await this.flush();
      if (!this.batch.data.add(rows, page.observedAt)) throw new Error('page keys not unique');
    }
    const batch = this.batch;
    batch.pageCount++;
    batch.items += page.items;
    batch.skippedCount += page.skippedCount;
    addSkipped(batch.skipped, page.skipped);
    // A slow upstream still sees its pages written within about maxDelayMs.
    if (
      batch.data.rows >= this.options.batchRows ||
      Date.now() - batch.startedAt >= this.options.maxDelayMs
    ) {
      await this.flush();
    }
  }

  /** Waits for the batch in flight (its error fails the pass here), then starts writing the current one. */
  async flush(): Promise<void> {
    const waitStarted = performance.now();
    if (this.inFlight !== null) await this.inFlight;
    this.inFlight = null;
    this.writeMs += performance.now() - waitStarted;
    if (this.batch.pageCount === 0) return;
    const full = this.batch;
    this.batch = this.newBatch();
    this.inFlight = this.writeOne(full);
    this.inFlight.catch(() => undefined);
  }

  /** Writes everything added so far and waits for it. */
  async drain(): Promise<void> {
    await this.flush();
    await this.flush();
  }

  /** After a failure: waits for the batch in flight to end, whatever its outcome. */
  async settle(): Promise<void> {
    if (this.inFlight !== null) await this.inFlight.catch(() => undefined);
  }

  private async writeOne(batch: PageBatch): Promise<void> {
    const rows = await this.options.write(batch);
    const { totals } = this;
    totals.pages += batch.pageCount;
    totals.items += batch.items;
    totals.upserted += rows;
    totals.skipped += batch.skippedCount;
    addSkipped(this.skippedByReason, batch.skipped);
    this.options.written(batch, rows, totals);
  }

  private newBatch(): PageBatch {
    const data = this.options.holders[this.turn++ % 2];
    data.reset();
    return { data, pageCount: 0, items: 0, skippedCount: 0, skipped: {}, startedAt: Date.now() };
  }
}
