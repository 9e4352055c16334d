import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Watches (owned by `watches/`, docs/watches.md): a client's price alert on one event's listings. A watch matches a
 * listing that appears at or under `max_price_minor`, an active listing whose price falls to it, or a drop of at
 * least `min_drop_percent` (at least one of the two is set). `query` is the name search a watch was resolved from
 * (null when created with an `event_id`). `subject` is the end user it alerts (under the key's binding), echoed in
 * every `watch.matched`. An expired watch (`expires_at` passed, database clock) never matches; a deleted one is
 * gone. `last_alerted_at` (the last `watch.matched`) holds the optional per-watch cooldown.
 *
 * The match (a trigger on `listings`, migration CreateWatchMatchTriggers) finds the watches of a changed listing's
 * event under its price through `watches_event_price_idx`.
 */
export class CreateWatches1795841036203 implements MigrationInterface {
  name = 'CreateWatches1795841036203';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE watches (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id uuid NOT NULL REFERENCES api_clients (id),
        event_id u64 NOT NULL,
        query text NULL CHECK (char_length(query) BETWEEN 1 AND 100),
        max_price_minor u64 NULL,
        min_drop_percent smallint NULL CHECK (min_drop_percent BETWEEN 1 AND 99),
        subject text NULL CHECK (char_length(subject) BETWEEN 1 AND 128),
        cooldown_seconds integer NULL CHECK (cooldown_seconds BETWEEN 1 AND 2592000),
        expires_at timestamptz NULL,
        last_alerted_at timestamptz NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CHECK (max_price_minor IS NOT NULL OR min_drop_percent IS NOT NULL)
      )
    `);
    // The match: a changed listing's event, then the watches whose max price it is under (NULLS FIRST would
    // not help: a watch without a max is a drop watch and is read with the event's others).
    await queryRunner.query(`CREATE INDEX watches_event_price_idx ON watches (event_id, max_price_minor)`);
    // Keyset pages of one client's watches, newest first (and the per-client cap's count).
    await queryRunner.query(
      `CREATE INDEX watches_client_page_idx ON watches (client_id, created_at DESC, id DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE watches`);
  }
}
