import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per catalog-sync pass: what it walked (`resource`, `scope_event_id` for an event refresh), how it
 * ended and its counters. `holder` and `fencing_token` are the lease it ran under; a pass left `running`
 * by a dead holder is marked `failed` by whoever takes the lease over.
 */
export class CreateSyncPasses1795355805474 implements MigrationInterface {
  name = 'CreateSyncPasses1795355805474';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sync_passes (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        resource text NOT NULL CHECK (resource IN ('events', 'listings', 'event_listings')),
        scope_event_id u64 NULL,
        status text NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
        trigger text NOT NULL DEFAULT 'schedule',
        started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        finished_at timestamptz NULL,
        pages bigint NOT NULL DEFAULT 0,
        items bigint NOT NULL DEFAULT 0,
        upserted bigint NOT NULL DEFAULT 0,
        removed bigint NOT NULL DEFAULT 0,
        skipped bigint NOT NULL DEFAULT 0,
        error text NULL,
        holder text NOT NULL,
        fencing_token bigint NOT NULL,
        CHECK ((resource = 'event_listings') = (scope_event_id IS NOT NULL))
      )
    `);
    await queryRunner.query(
      `CREATE INDEX sync_passes_resource_idx ON sync_passes (resource, status, finished_at DESC, id DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sync_passes`);
  }
}
