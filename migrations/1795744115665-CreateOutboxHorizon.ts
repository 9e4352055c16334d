import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How far retention pruning has deleted the outbox (owned by `webhooks/`): one row, the feed position
 * (xact_id, position) of the last event deleted. Pruning deletes a prefix of the feed order, so a cursor below
 * this position lost events (410 with this position as the oldest cursor) and one at or above it lost none.
 */
export class CreateOutboxHorizon1795744115665 implements MigrationInterface {
  name = 'CreateOutboxHorizon1795744115665';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE outbox_horizon (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        xact_id xid8 NOT NULL,
        position bigint NOT NULL,
        pruned_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE outbox_horizon`);
  }
}
