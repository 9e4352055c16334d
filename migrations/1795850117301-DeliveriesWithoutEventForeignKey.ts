import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `webhook_deliveries.event_id` loses its foreign key to `outbox_events` (issue 32, docs/BENCHMARKS.md "Session 17:
 * catalog cost"): its integrity holds by construction, and its per-row check was a large share of what a fan-out
 * costs (a pass changing 10,000 prices for 10 endpoints writes 100,000 deliveries, each checked and each locking
 * its event row `FOR KEY SHARE`).
 *
 * Why no delivery can name a missing event without the key:
 * - insert: every delivery is inserted by the statement that inserts its event, from that statement's own
 *   `RETURNING` (`outbox_append`, `catalog_append`, `outbox_append_set`, the ping in
 *   src/webhooks/outbox.repository.ts) — no statement inserts a delivery for an event it did not just insert, so
 *   the event exists, in the same transaction, committed or rolled back with it;
 * - update: no statement changes a delivery's `event_id` or an event's `id`;
 * - delete: an event is deleted only by pruning (src/webhooks/outbox.repository.ts, a prefix of the feed order
 *   past the retention, finished transactions only), which cannot see an event a running transaction is
 *   inserting. The ON DELETE CASCADE is replaced by one set-based delete per statement: the AFTER DELETE statement
 *   trigger below deletes the deliveries of every event the statement deleted (through the `(event_id, …)` index,
 *   …-DeliveriesIndexedByEvent.ts), in that statement's transaction — every path that deletes events (the pruner,
 *   a test's or an operator's `DELETE`) leaves no delivery behind, as the cascade did, and a prune batch of
 *   5,000 events is one DELETE of their deliveries instead of 5,000 cascaded ones. A TRUNCATE of `outbox_events`
 *   (which the key refused without CASCADE) deletes every delivery with it.
 *
 * The foreign key to `webhook_endpoints` stays: endpoints are deleted concurrently with fan-outs that read them, and
 * its check (a key-share lock on the endpoint row) is what stops a fan-out that read an endpoint about to be deleted
 * from leaving a delivery behind it.
 *
 * The trigger is created before the key is dropped, so at no point does a deleted event keep its deliveries.
 */
export class DeliveriesWithoutEventForeignKey1795850117301 implements MigrationInterface {
  name = 'DeliveriesWithoutEventForeignKey1795850117301';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION outbox_events_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM webhook_deliveries d USING gone_events g WHERE d.event_id = g.id;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER outbox_events_deliveries_deleted AFTER DELETE ON outbox_events
        REFERENCING OLD TABLE AS gone_events FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_deleted()`);
    await queryRunner.query(`
      CREATE FUNCTION outbox_events_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM webhook_deliveries;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER outbox_events_deliveries_truncated AFTER TRUNCATE ON outbox_events
        FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_truncated()`);
    await queryRunner.query(
      `ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Orphans cannot exist (see above); NOT VALID would hide one if they did, so the key is validated.
    await queryRunner.query(`
      ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id)
        REFERENCES outbox_events (id) ON DELETE CASCADE`);
    await queryRunner.query(`DROP TRIGGER outbox_events_deliveries_truncated ON outbox_events`);
    await queryRunner.query(`DROP FUNCTION outbox_events_truncated()`);
    await queryRunner.query(`DROP TRIGGER outbox_events_deliveries_deleted ON outbox_events`);
    await queryRunner.query(`DROP FUNCTION outbox_events_deleted()`);
  }
}
