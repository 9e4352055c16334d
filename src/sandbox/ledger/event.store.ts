/** One event of the sandbox ledger. Events are few (thousands at most), so plain objects are fine here. */
export interface EventRecord {
  readonly index: number;
  readonly eventId: bigint;
  readonly name: string;
  readonly startAtMs: number;
  readonly venue: string;
  /** Address-book indices every sale of this event must pay royalties to, in order. */
  readonly royalty: readonly number[];
  /** Address-book index of the ticket type config, or -1 when the event has none. */
  readonly ticketTypeConfig: number;
  /** Cached JSON fragments: the name needs escaping, and each listing page repeats them. */
  readonly nameJson: string;
  readonly startAtJson: string;
  readonly venueJson: string;
}

export type NewEvent = Omit<EventRecord, 'index' | 'nameJson' | 'startAtJson' | 'venueJson'>;

export class EventStore {
  private readonly events: EventRecord[] = [];
  private readonly byId = new Map<bigint, number>();

  add(input: NewEvent): EventRecord {
    if (this.byId.has(input.eventId)) throw new Error(`event ${input.eventId} already exists`);
    const record: EventRecord = {
      ...input,
      index: this.events.length,
      nameJson: JSON.stringify(input.name),
      startAtJson: JSON.stringify(new Date(input.startAtMs).toISOString()),
      venueJson: JSON.stringify(input.venue),
    };
    this.events.push(record);
    this.byId.set(input.eventId, record.index);
    return record;
  }

  /** Store index of an event id, or -1. */
  findIndex(eventId: bigint): number {
    return this.byId.get(eventId) ?? -1;
  }

  get(index: number): EventRecord {
    return this.events[index];
  }

  get size(): number {
    return this.events.length;
  }
}
