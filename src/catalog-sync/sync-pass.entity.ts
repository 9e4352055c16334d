import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { u64Transformer } from '../database/u64';

export const SYNC_RESOURCES = ['events', 'listings', 'event_listings'] as const;
export type SyncResource = (typeof SYNC_RESOURCES)[number];
export const SYNC_PASS_STATUSES = ['running', 'completed', 'failed', 'cancelled'] as const;
export type SyncPassStatus = (typeof SYNC_PASS_STATUSES)[number];

/** One sync pass (table `sync_passes`). Counters are bigint columns read back as decimal strings. */
@Entity({ name: 'sync_passes' })
export class SyncPassEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ type: 'text' })
  resource: SyncResource;

  @Column({
    name: 'scope_event_id',
    type: 'numeric',
    precision: 20,
    scale: 0,
    nullable: true,
    transformer: u64Transformer,
  })
  scopeEventId: bigint | null;

  @Column({ type: 'text' })
  status: SyncPassStatus;

  /** schedule | startup | operator | refresh */
  @Column({ type: 'text' })
  trigger: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  @Column({ type: 'bigint' })
  pages: string;

  @Column({ type: 'bigint' })
  items: string;

  @Column({ type: 'bigint' })
  upserted: string;

  @Column({ type: 'bigint' })
  removed: string;

  @Column({ type: 'bigint' })
  skipped: string;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ type: 'text' })
  holder: string;

  @Column({ name: 'fencing_token', type: 'bigint' })
  fencingToken: string;
}
