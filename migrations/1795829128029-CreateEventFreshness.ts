import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-event freshness of the listings mirror (catalog-sync, docs/catalog-sync.md "Live catalog"): one row per
 * event that a complete per-event walk covered, written in the walk's completing transaction. `data_as_of` is
 * the start of the newest complete walk of that event (database clock; every active listing of the event was
 * seen upstream at or after it); an event's own `data_as_of` is the later of this and the last complete full
 * listings pass. `pages` is what that walk cost upstream (the hot-walk scheduler's estimate of the next one).
 * The read path loads the rows newer than the last full pass (index on data_as_of).
 */
export class CreateEventFreshness1795829128029 implements MigrationInterface {
  name = 'CreateEventFreshness1795829128029';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE event_freshness (
        event_id u64 PRIMARY KEY,
        data_as_of timestamptz NOT NULL,
        pass_id bigint NOT NULL,
        pages integer NOT NULL DEFAULT 0,
        walked_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )
    `);
    await queryRunner.query(`CREATE INDEX event_freshness_as_of_idx ON event_freshness (data_as_of)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE event_freshness`);
  }
}
