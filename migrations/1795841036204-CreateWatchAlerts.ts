import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What each watch has alerted (owned by `watches/`): one row per watch, listing and price it announced a
 * `watch.matched` for. The match inserts here first (ON CONFLICT DO NOTHING) and announces only the rows it
 * inserted, so a listing is never announced twice to a watch at the same price, whichever pass, walk, replica or
 * live observation wrote it (two transactions inserting the same key: the second waits for the first and inserts
 * nothing). Goes with its watch.
 */
export class CreateWatchAlerts1795841036204 implements MigrationInterface {
  name = 'CreateWatchAlerts1795841036204';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE watch_alerts (
        watch_id uuid NOT NULL REFERENCES watches (id) ON DELETE CASCADE,
        event_id u64 NOT NULL,
        ticket_id u64 NOT NULL,
        price_minor u64 NOT NULL,
        alerted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (watch_id, event_id, ticket_id, price_minor)
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE watch_alerts`);
  }
}
