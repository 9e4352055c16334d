import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Running passes by id: every pass start and scheduler tick looks for running passes whose lease is gone
 * (failAbandoned). With per-event walks of the hot set (about a thousand pass rows a minute), a scan of every
 * pass for `status = 'running'` would grow with the table; this index keeps it to the few running ones.
 */
export class CreateSyncPassesRunningIndex1795831409600 implements MigrationInterface {
  name = 'CreateSyncPassesRunningIndex1795831409600';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX sync_passes_running_idx ON sync_passes (id) WHERE status = 'running'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX sync_passes_running_idx`);
  }
}
