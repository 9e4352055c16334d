import type { ListingRow } from './catalog-sync.mapper';
import { copyJsonText } from './pg-copy';

/**
 * Listing rows waiting for one write, kept as their COPY text encoded in one growing buffer and their keys
 * only: no large string is built (a page's text as one string lands in V8's large-object space, which only
 * a full GC frees). A batch can be reset and refilled once written, reusing its buffer. A page whose key is
 * already in the batch is refused (the caller writes the batch first): one merge cannot touch a row twice.
 *
 * Each line is `event_id, ticket_id, ask_price_minor, expires_at, raw, observed_at` (the staging table's
 * columns). A direct write into `listings` (ListingRepository.copyNew) takes the same lines in primary-key
 * order with the row's bookkeeping columns appended (`withTail`).
 */
export class ListingBatch {
  private buf = Buffer.allocUnsafe(0);
  private length = 0;
  /** withTail's lines (reused by every call, grown as needed). */
  private sorted = Buffer.allocUnsafe(0);
  private readonly keys = new Set<string>();
  /** Per line, in the order added: where it starts in `buf`, and its key (for withTail's order). */
  private starts: number[] = [];
  private eventIds: bigint[] = [];
  private ticketIds: bigint[] = [];

  get rows(): number {
    return this.keys.size;
  }

  /** The COPY text written so far (a view of the batch's buffer: valid until the next reset). */
  get data(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  reset(): void {
    this.length = 0;
    this.keys.clear();
    this.starts = [];
    this.eventIds = [];
    this.ticketIds = [];
  }

  /** Adds a page's rows (one row per key, as mapPage gives them); false, adding nothing, on a repeated key. */
  add(rows: readonly ListingRow[], observedAt: Date): boolean {
    const eventIds: string[] = [];
    const ticketIds: string[] = [];
    for (const r of rows) {
      const eventId = r.eventId.toString();
      const ticketId = r.ticketId.toString();
      if (this.keys.has(`${eventId}:${ticketId}`)) return false;
      eventIds.push(eventId);
      ticketIds.push(ticketId);
    }
    const end = `\t${observedAt.toISOString()}\n`;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      const line = `${eventIds[i]}\t${ticketIds[i]}\t${r.askPriceMinor}\t${r.expiresAt ?? '\\N'}\t${copyJsonText(r.raw)}${end}`;
      // At most 3 UTF-8 bytes per UTF-16 code unit.
      this.ensure(line.length * 3);
      this.starts.push(this.length);
      this.eventIds.push(r.eventId);
      this.ticketIds.push(r.ticketId);
      this.length += this.buf.write(line, this.length, 'utf8');
    }
    for (let i = 0; i < rows.length; i++) this.keys.add(`${eventIds[i]}:${ticketIds[i]}`);
    return true;
  }

  /**
   * The batch's lines in (event_id, ticket_id) order, each with `tail` (tab-separated values, no newline)
   * appended as its last columns, as one COPY text (a view of a second buffer the batch keeps and reuses, valid
   * until the next call). Primary-key order lets consecutive inserts share index pages, as the merge's ORDER BY
   * does. One buffer, not a view per line and tail: the socket is not corked (pg-copy.ts), so each piece was a
   * write of its own — 10,000 system calls for a batch of 5,000 rows (docs/BENCHMARKS.md "Session 22").
   */
  withTail(tail: string): Buffer {
    const { starts, eventIds: e, ticketIds: t } = this;
    const order = Array.from(starts.keys()).sort((a, b) =>
      e[a] !== e[b] ? (e[a] < e[b] ? -1 : 1) : t[a] < t[b] ? -1 : t[a] > t[b] ? 1 : 0,
    );
    const suffix = Buffer.from(`\t${tail}\n`, 'utf8');
    // Each line loses its newline and gains the suffix.
    const bytes = this.length + starts.length * (suffix.length - 1);
    // Batches are alike in size: an eighth more than this one, not double (the buffer stays as long as the batch).
    if (this.sorted.length < bytes) this.sorted = Buffer.allocUnsafe(Math.ceil(bytes * 1.125));
    let at = 0;
    for (const i of order) {
      // Without the line's newline (the last byte before the next line's start).
      const end = (i + 1 < starts.length ? starts[i + 1] : this.length) - 1;
      at += this.buf.copy(this.sorted, at, starts[i], end);
      at += suffix.copy(this.sorted, at);
    }
    return this.sorted.subarray(0, at);
  }

  private ensure(bytes: number): void {
    if (this.length + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.length + bytes, this.buf.length * 2, 65_536));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
}
