import type { Sql } from './sql';

export const MIRROR_GENERATION_CHANNEL = 'mirror_generation';

/**
 * The sync's bump of `mirror_generation` (with its NOTIFY) and its read of the current value. The mirror's read side
 * reads it (the mirror state, the response cache key) and bumps it too when a live re-read changes a listing
 * (catalog-mirror.repository.ts `applyLiveListing`): both in catalog-sync, the table's one owner.
 */
export class MirrorGenerationRepository {
  constructor(private readonly sql: Sql) {}

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
}
