import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The mirror of the upstream's upcoming events (owned by catalog-sync). `raw` is the item as received with
 * its u64 identifiers as decimal strings. `observed_at` is when the upstream read that established the
 * row's current state started: the stale-write guard (a slower pass never overwrites newer data) compares
 * it. `removed_at` is set only by a completed pass that did not see the event; NULL = active. A row is
 * written only when its content changes, so `last_seen_at` is the last change or revival, not the last
 * pass (the scope's last completed pass says that).
 */
export class CreateEvents1795355803538 implements MigrationInterface {
  name = 'CreateEvents1795355803538';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await queryRunner.query(`
      CREATE TABLE events (
        event_id u64 PRIMARY KEY,
        name text NOT NULL,
        start_at_raw text NOT NULL,
        start_at timestamptz NULL,
        raw jsonb NOT NULL,
        first_seen_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        removed_at timestamptz NULL,
        observed_at timestamptz NOT NULL,
        last_seen_pass bigint NULL
      )
    `);
    await queryRunner.query(
      `CREATE INDEX events_upcoming_idx ON events (start_at, event_id) WHERE removed_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX events_name_trgm_idx ON events USING gin (lower(name) gin_trgm_ops) WHERE removed_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE events`);
  }
}
