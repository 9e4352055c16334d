/** How one batch is read: a lone item by its plain statement, several by one statement answering them in order. */
export interface TurnBatchReads<T, R> {
  one: (item: T) => Promise<R>;
  many: (items: T[]) => Promise<R[]>;
}

interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces the reads asked for in the same turn of the event loop into one round trip per group: every read still
 * goes to PostgreSQL after it was asked for, and nothing is kept between turns, so it is not a cache. Under load,
 * requests that arrived together share a pooled connection, a statement and a round trip instead of queueing for the
 * pool one by one. The batch is sent after the poll phase (`setImmediate`), when every request of the turn has
 * asked. Items of one group (`groupOf`: what decides the statement's text) go out together, at most `max` per
 * statement (larger bursts become several statements, sent together); a lone item takes `one`, the plain statement.
 * A failed statement fails every item of its batch. Used by the listings reads (listing-batch.reader.ts,
 * listing-page-batch.reader.ts). Writes have their own group commit (webhooks/write-batch.ts), which also waits for
 * the write in progress.
 */
export class TurnBatch<T, R> {
  private pending = new Map<string, Pending<T, R>[]>();
  private scheduled = false;

  constructor(
    private readonly reads: TurnBatchReads<T, R>,
    private readonly max: number,
    private readonly groupOf: (item: T) => string = () => '',
  ) {}

  read(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const group = this.groupOf(item);
      const same = this.pending.get(group);
      if (same) same.push({ item, resolve, reject });
      else this.pending.set(group, [{ item, resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const groups = this.pending;
    this.pending = new Map();
    for (const items of groups.values())
      for (let start = 0; start < items.length; start += this.max)
        this.send(items.slice(start, start + this.max));
  }

  private send(batch: Pending<T, R>[]): void {
    const [only] = batch;
    if (batch.length === 1 && only) {
      this.reads.one(only.item).then(only.resolve, only.reject);
      return;
    }
    let answered: Promise<R[]>;
    try {
      answered = this.reads.many(batch.map((p) => p.item));
    } catch (error) {
      answered = Promise.reject(error);
    }
    answered.then(
      (results) => batch.forEach((p, i) => p.resolve(results[i])),
      (error: unknown) => {
        for (const p of batch) p.reject(error);
      },
    );
  }
}
