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

/** How a TurnBatch groups and bounds its statements. */
export interface TurnBatchOptions<T> {
  /** Most items in one statement (larger bursts become several statements). */
  max: number;
  /** What decides the statement's text: items of one group go out together (default: one group). */
  groupOf?: (item: T) => string;
  /**
   * Most statements of this batch waiting for PostgreSQL at once (default: unbounded). Items asked for while that
   * many are out wait, and go together when one answers, as they would wait for a pooled connection.
   */
  inFlight?: number;
}

/**
 * Coalesces the reads asked for in the same turn of the event loop into one round trip per group: every read still
 * goes to PostgreSQL after it was asked for, and nothing is kept between turns, so it is not a cache. Under load,
 * requests that arrived together share a pooled connection, a statement and a round trip instead of queueing for the
 * pool one by one. The batch is sent after the poll phase (`setImmediate`), when every request of the turn has
 * asked. Items of one group (`groupOf`: what decides the statement's text) go out together, at most `max` per
 * statement (larger bursts become several statements, sent together); a lone item takes `one`, the plain statement.
 * With `inFlight`, at most that many statements are out at once: what is asked meanwhile waits for the first of them
 * to answer and then goes out together, so under load the statements grow instead of multiplying (each costs a
 * socket write, a pool checkout and PostgreSQL's per-statement work) and the wait is one round trip at most.
 * A failed statement fails every item of its batch. Used by the listings reads (listing-batch.reader.ts,
 * listing-page-batch.reader.ts). Writes have their own group commit (webhooks/write-batch.ts), which also waits for
 * the write in progress.
 */
export class TurnBatch<T, R> {
  private pending = new Map<string, Pending<T, R>[]>();
  private scheduled = false;
  private out = 0;
  private readonly max: number;
  private readonly groupOf: (item: T) => string;
  private readonly inFlight: number;

  constructor(
    private readonly reads: TurnBatchReads<T, R>,
    options: TurnBatchOptions<T>,
  ) {
    this.max = options.max;
    this.groupOf = options.groupOf ?? (() => '');
    this.inFlight = options.inFlight ?? Infinity;
    if (!(this.inFlight >= 1)) throw new RangeError('inFlight must be at least 1');
  }

  read(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const group = this.groupOf(item);
      const same = this.pending.get(group);
      if (same) same.push({ item, resolve, reject });
      else this.pending.set(group, [{ item, resolve, reject }]);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.out >= this.inFlight) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /**
   * Sends statements while slots are free, one statement per group in turn: a group's rest goes behind the other
   * groups, so a burst of one group (one client's flood of one shape) cannot keep another group's read waiting for
   * more than one statement of it. What is left waits for a statement to answer (settled() schedules the next flush).
   */
  private flush(): void {
    this.scheduled = false;
    while (this.out < this.inFlight) {
      const next = this.pending.entries().next();
      if (next.done) return;
      const [group, items] = next.value;
      this.pending.delete(group);
      this.send(items.length > this.max ? items.slice(0, this.max) : items);
      if (items.length > this.max) this.pending.set(group, items.slice(this.max));
    }
  }

  /** A statement answered (or failed): its slot is free, and what waits goes out on the next flush. */
  private settled(): void {
    this.out--;
    if (this.pending.size > 0) this.schedule();
  }

  /** One statement: a lone item by the plain read, more by the batch read; a read that throws fails its items. */
  private send(batch: Pending<T, R>[]): void {
    this.out++;
    let answered: Promise<R[]>;
    try {
      const [only] = batch;
      answered =
        batch.length === 1 && only
          ? this.reads.one(only.item).then((result) => [result])
          : this.reads.many(batch.map((p) => p.item));
    } catch (error) {
      answered = Promise.reject(error);
    }
    answered.then(
      (results) => {
        this.settled();
        for (let i = 0; i < batch.length; i++) batch[i]?.resolve(results[i]);
      },
      (error: unknown) => {
        this.settled();
        for (const p of batch) p.reject(error);
      },
    );
  }
}
