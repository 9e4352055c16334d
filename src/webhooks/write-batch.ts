/** Most items one statement writes. */
export const WRITE_BATCH_MAX = 128;

/**
 * Group commit of small writes: items added while no write runs go out together at the end of the current turn of
 * the event loop (sends whose answers arrived in one poll), and items added while a write runs go out together right
 * after it. So an idle worker's write waits for nothing, and a busy one's writes cost one statement per batch
 * instead of one per item (docs/BENCHMARKS.md, "Webhook delivery"). `write` answers each item in its batch's order;
 * a failed write rejects every item of its batch (the caller's lease then runs out, as when one write fails).
 */
export class WriteBatch<T, R> {
  private queued: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private writing = false;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly max = WRITE_BATCH_MAX,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0, this.max);
        try {
          const results = await this.write(batch.map((q) => q.item));
          batch.forEach((q, i) => q.resolve(results[i]));
        } catch (error) {
          for (const q of batch) q.reject(error);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
