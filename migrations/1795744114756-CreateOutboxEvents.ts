import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The transactional outbox (owned by `webhooks/`): one row per event, inserted in the same transaction as the
 * state change it announces. `id` (`evt_…`) is the Standard Webhooks `webhook-id` and the feed item's id;
 * `client_id` the owner (null: an operator event, for admin clients only); `payload` the small `data` object.
 * `xact_id` is the writing transaction's id and `position` the insertion order: the catch-up feed serves rows
 * below the oldest transaction still running (`pg_snapshot_xmin`) in (xact_id, position) order, so no row can
 * ever appear behind a cursor.
 */
export class CreateOutboxEvents1795744114756 implements MigrationInterface {
  name = 'CreateOutboxEvents1795744114756';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE outbox_events (
        id text PRIMARY KEY CHECK (id ~ '^evt_[0-9a-f]{32}$'),
        type text NOT NULL CHECK (type ~ '^[a-z_]+\\.[a-z_]+$'),
        version smallint NOT NULL CHECK (version >= 1),
        client_id uuid NULL,
        payload jsonb NOT NULL,
        occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        xact_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
        position bigint GENERATED ALWAYS AS IDENTITY
      )
    `);
    await queryRunner.query(
      `CREATE INDEX outbox_events_feed_idx ON outbox_events (client_id, xact_id, position)`,
    );
    await queryRunner.query(`CREATE INDEX outbox_events_order_idx ON outbox_events (xact_id, position)`);
    await queryRunner.query(`CREATE INDEX outbox_events_occurred_idx ON outbox_events (occurred_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE outbox_events`);
  }
}
