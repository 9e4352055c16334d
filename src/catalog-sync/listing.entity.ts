import { Column, Entity, PrimaryColumn } from 'typeorm';
import { u64Transformer } from '../database/u64';

const u64Key = { type: 'numeric', precision: 20, scale: 0, transformer: u64Transformer } as const;

/** A mirrored active listing (table `listings`, owned by catalog-sync; migrations/…-CreateListings.ts). */
@Entity({ name: 'listings' })
export class ListingEntity {
  @PrimaryColumn({ name: 'event_id', ...u64Key })
  eventId: bigint;

  @PrimaryColumn({ name: 'ticket_id', ...u64Key })
  ticketId: bigint;

  /** Exact price in minor units of the payment token. */
  @Column({ name: 'ask_price_minor', ...u64Key })
  askPriceMinor: bigint;

  /** i64 unix seconds when the item carried a valid `expires_at`, else null. */
  @Column({
    name: 'expires_at',
    type: 'bigint',
    nullable: true,
    transformer: {
      to: (v: bigint | null | undefined) => (typeof v === 'bigint' ? v.toString() : v),
      from: (v: string | null) => (v === null ? null : BigInt(v)),
    },
  })
  expiresAt: bigint | null;

  /** The item as received (seller, seller_payout, permit_version, …), u64 identifiers as decimal strings. */
  @Column({ type: 'jsonb' })
  raw: Record<string, unknown>;

  @Column({ name: 'first_seen_at', type: 'timestamptz' })
  firstSeenAt: Date;

  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt: Date;

  @Column({ name: 'removed_at', type: 'timestamptz', nullable: true })
  removedAt: Date | null;

  @Column({ name: 'observed_at', type: 'timestamptz' })
  observedAt: Date;

  @Column({ name: 'last_seen_pass', type: 'bigint', nullable: true })
  lastSeenPass: string | null;
}
