import type { ListingRow } from './catalog-mirror.types';

/** One listing as the read API served it: what a sample re-reads live and compares with. */
export interface ServedListing {
  eventId: string;
  ticketId: string;
  /** The ask served, u64 decimal string (exact). */
  priceMinor: string;
  /** This process's monotonic clock (performance.now()) when it was served: compared only on this replica. */
  servedAt: number;
}

/**
 * The listings this replica served last, at most `capacity` distinct ones, newest last: a listing served again moves
 * to the end with its new price and time, and the oldest leaves when a new one comes in. O(rows) per note, bounded
 * memory whatever the traffic.
 */
export class ServedReservoir {
  private readonly served = new Map<string, ServedListing>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('capacity must be a positive integer');
  }

  get size(): number {
    return this.served.size;
  }

  note(rows: readonly ListingRow[], servedAt: number): void {
    for (const row of rows) {
      const key = `${row.event_id}:${row.ticket_id}`;
      this.served.delete(key);
      this.served.set(key, {
        eventId: row.event_id,
        ticketId: row.ticket_id,
        priceMinor: row.ask_price_minor,
        servedAt,
      });
      if (this.served.size > this.capacity) {
        const oldest = this.served.keys().next();
        if (!oldest.done) this.served.delete(oldest.value);
      }
    }
  }

  /**
   * One listing drawn uniformly among those served at or after `since`, taken out of the reservoir (served again,
   * it comes back); undefined when none was. `random` in [0, 1).
   */
  take(since: number, random: () => number = Math.random): ServedListing | undefined {
    // Insertion order is served order (a re-served listing moves to the end): the recent ones are a suffix.
    const recent: ServedListing[] = [];
    for (const listing of this.served.values()) if (listing.servedAt >= since) recent.push(listing);
    if (recent.length === 0) return undefined;
    const picked = recent[Math.min(recent.length - 1, Math.floor(random() * recent.length))];
    if (picked) this.served.delete(`${picked.eventId}:${picked.ticketId}`);
    return picked;
  }
}

/** What one sample found: still buyable at the served price, or not (gone, or at another price). */
export type SampleVerdict = 'buyable' | 'gone' | 'repriced';

/** The verdict of a live re-read of a served listing: `livePriceMinor` null when a complete walk proved it gone. */
export function sampleVerdict(servedPriceMinor: string, livePriceMinor: bigint | null): SampleVerdict {
  if (livePriceMinor === null) return 'gone';
  return livePriceMinor === BigInt(servedPriceMinor) ? 'buyable' : 'repriced';
}

/** The share of buyable verdicts among the last `size` samples (a ring): the served-accuracy gauge. */
export class AccuracyWindow {
  private readonly ring: boolean[] = [];
  private next = 0;
  private buyable = 0;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error('size must be a positive integer');
  }

  add(verdict: SampleVerdict): void {
    const ok = verdict === 'buyable';
    if (this.ring.length < this.size) this.ring.push(ok);
    else {
      if (this.ring[this.next]) this.buyable--;
      this.ring[this.next] = ok;
    }
    if (ok) this.buyable++;
    this.next = (this.next + 1) % this.size;
  }

  /** Samples in the window now (at most `size`). */
  get count(): number {
    return this.ring.length;
  }

  /** Buyable / samples in the window; null before the first sample. */
  get accuracy(): number | null {
    return this.ring.length === 0 ? null : this.buyable / this.ring.length;
  }
}
