import { Column, Entity, PrimaryColumn } from 'typeorm';
import { u64Transformer } from '../database/u64';

/** A mirrored upcoming event (table `events`, owned by catalog-sync; migrations/…-CreateEvents.ts). */
@Entity({ name: 'events' })
export class EventEntity {
  @PrimaryColumn({ name: 'event_id', type: 'numeric', precision: 20, scale: 0, transformer: u64Transformer })
  eventId: bigint;

  @Column({ type: 'text' })
  name: string;

  /** `start_at` exactly as received. */
  @Column({ name: 'start_at_raw', type: 'text' })
  startAtRaw: string;

  /** Parsed when `start_at_raw` is an RFC 3339 instant, else null. */
  @Column({ name: 'start_at', type: 'timestamptz', nullable: true })
  startAt: Date | null;

  /** The item as received, u64 identifiers as decimal strings. */
  @Column({ type: 'jsonb' })
  raw: Record<string, unknown>;

  @Column({ name: 'first_seen_at', type: 'timestamptz' })
  firstSeenAt: Date;

  /** Last time a read changed or revived the row (unchanged rows are never rewritten). */
  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt: Date;

  /** Set by a completed pass that did not see the event; null = active. */
  @Column({ name: 'removed_at', type: 'timestamptz', nullable: true })
  removedAt: Date | null;

  /** Start of the upstream read that established the current state (stale-write guard). */
  @Column({ name: 'observed_at', type: 'timestamptz' })
  observedAt: Date;

  /** The sync pass that last wrote the row. */
  @Column({ name: 'last_seen_pass', type: 'bigint', nullable: true })
  lastSeenPass: string | null;
}
