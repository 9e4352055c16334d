import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '../database/database.module';
import type { Sql } from './sql';

export const MIRROR_GENERATION_CHANNEL = 'mirror_generation';

/** A full pass's resource (the mirror table it fills). */
export type FullPassResource = 'events' | 'listings';

/**
 * Why a full pass is a backfill (announced as one `sync.backfill_completed`, never per row): the mirror table had
 * no active row, or the database's epoch (pg_postmaster_start_time: a restore, a failover or a restart) is not the
 * one under which the last full pass of the resource completed.
 */
export type BackfillReason = 'empty_mirror' | 'epoch_changed';

/** The `sync.backfill_completed` data of a pass. */
export interface BackfillCompleted {
  passId: string;
  resource: FullPassResource;
  reason: BackfillReason;
  items: number;
  upserted: number;
  removed: number;
}

const EPOCH_COLUMN: Record<FullPassResource, string> = { events: 'events_epoch', listings: 'listings_epoch' };

/**
 * The sync's bump of `mirror_generation` (with its NOTIFY) and its read of the current value. The mirror's read side
 * reads it (the mirror state, the response cache key) and bumps it too when a live re-read changes a listing
 * (catalog-mirror.repository.ts `applyLiveListing`): both in catalog-sync, the table's one owner. It also keeps each
 * full pass's epoch (a backfill's test, issue 32).
 */
@Injectable()
export class MirrorGenerationRepository {
  /** The app's pg pool in the module (PG_POOL); tests and benches may pass a pool or a held client. */
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  /** +1 and NOTIFY, inside the transaction that changed events/listings rows. */
  async bump(db: Sql): Promise<bigint> {
    const { rows } = await db.query<{ generation: string }>(
      `WITH g AS (
         UPDATE mirror_generation SET generation = generation + 1, changed_at = now() RETURNING generation)
       SELECT generation::text, pg_notify('${MIRROR_GENERATION_CHANNEL}', generation::text) FROM g`,
    );
    return BigInt(rows[0].generation);
  }

  async current(): Promise<bigint> {
    const { rows } = await this.sql.query<{ generation: string }>(
      `SELECT generation::text FROM mirror_generation`,
    );
    return BigInt(rows[0]?.generation ?? '0');
  }

  /** Whether a full pass of `resource` starting now is a backfill, and why; null when it is not. */
  async backfillReason(db: Sql, resource: FullPassResource): Promise<BackfillReason | null> {
    const { rows } = await db.query<{ empty: boolean; moved: boolean }>(
      `SELECT NOT EXISTS (SELECT 1 FROM ${resource} WHERE removed_at IS NULL) AS empty,
         coalesce((SELECT ${EPOCH_COLUMN[resource]} FROM mirror_generation), '')
           <> pg_postmaster_start_time()::text AS moved`,
    );
    const row = rows[0];
    if (row?.empty) return 'empty_mirror';
    return row?.moved ? 'epoch_changed' : null;
  }

  /**
   * In a backfill's transactions: the catalog triggers (migrations/…-CreateCatalogEvents.ts) announce nothing for
   * this transaction's writes (a transaction-local setting: gone at its commit or rollback).
   */
  async quietCatalog(db: Sql): Promise<void> {
    await db.query(`SELECT set_config('bff.catalog_backfill', 'on', true)`);
  }

  /**
   * In the transaction that completes a full pass: the epoch it completed under, and, for a backfill, its one
   * `sync.backfill_completed` (operators, and every client with a catalog subscription).
   */
  async fullPassCompleted(
    db: Sql,
    resource: FullPassResource,
    backfill: BackfillCompleted | null,
  ): Promise<void> {
    await db.query(
      `UPDATE mirror_generation SET ${EPOCH_COLUMN[resource]} = pg_postmaster_start_time()::text`,
    );
    if (backfill === null) return;
    await db.query(`SELECT catalog_backfill_completed($1::jsonb)`, [
      JSON.stringify({
        pass_id: backfill.passId,
        resource: backfill.resource,
        reason: backfill.reason,
        items: backfill.items,
        upserted: backfill.upserted,
        removed: backfill.removed,
      }),
    ]);
  }
}
