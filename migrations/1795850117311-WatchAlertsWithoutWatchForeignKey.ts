import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `watch_alerts.watch_id` loses its foreign key to `watches` (issue 32, docs/watches.md "Tables", docs/BENCHMARKS.md
 * "Session 18: watches cost"): every alert is checked by a separate query per row (an index lookup of the watch and
 * a key-share lock on its row, a small plan started and ended each time), about an eighth of what a dense pass's
 * matches cost, for a key whose insert side holds by construction.
 *
 * Why no alert can name a watch that does not exist, without the key:
 * - insert: the only statement that inserts alerts is the match (…-WatchMatchCooldownOnlyTouch.ts), and it
 *   inserts them for watches it has just read by joining `watches` in the same statement;
 * - update: no statement changes an alert's `watch_id` or a watch's `id`;
 * - delete: the ON DELETE CASCADE is replaced by one set-based delete per statement — an AFTER DELETE statement
 *   trigger on `watches` deletes the alerts of every watch the statement deleted (through the primary key, which
 *   starts with `watch_id`), and a TRUNCATE of `watches` empties `watch_alerts`, as …-DeliveriesWithoutEventForeignKey
 *   does for deliveries.
 *
 * One race the key closed differently: a watch deleted while a mirror write that read it is still running. With the
 * key the delete waited for the write's lock and cascaded to its alert (or, deleted first, failed the mirror write
 * with a key violation); now the write commits and its alert row stays behind the deleted watch. Such a row is never
 * read (alerts are read by the id of an existing watch, and ids are random uuids, never reused) and costs one row.
 *
 * The trigger is created before the key is dropped, so at no point does a deleted watch keep its alerts.
 */
export class WatchAlertsWithoutWatchForeignKey1795850117311 implements MigrationInterface {
  name = 'WatchAlertsWithoutWatchForeignKey1795850117311';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION watches_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM watch_alerts a USING gone_watches g WHERE a.watch_id = g.id;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER watches_alerts_deleted AFTER DELETE ON watches
        REFERENCING OLD TABLE AS gone_watches FOR EACH STATEMENT EXECUTE FUNCTION watches_deleted()`);
    await queryRunner.query(`
      CREATE FUNCTION watches_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM watch_alerts;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER watches_alerts_truncated AFTER TRUNCATE ON watches
        FOR EACH STATEMENT EXECUTE FUNCTION watches_truncated()`);
    await queryRunner.query(`ALTER TABLE watch_alerts DROP CONSTRAINT watch_alerts_watch_id_fkey`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The race above can have left rows of deleted watches: they go, so that the key can be validated.
    await queryRunner.query(
      `DELETE FROM watch_alerts a WHERE NOT EXISTS (SELECT 1 FROM watches w WHERE w.id = a.watch_id)`,
    );
    await queryRunner.query(`
      ALTER TABLE watch_alerts ADD CONSTRAINT watch_alerts_watch_id_fkey FOREIGN KEY (watch_id)
        REFERENCES watches (id) ON DELETE CASCADE`);
    await queryRunner.query(`DROP TRIGGER watches_alerts_truncated ON watches`);
    await queryRunner.query(`DROP FUNCTION watches_truncated()`);
    await queryRunner.query(`DROP TRIGGER watches_alerts_deleted ON watches`);
    await queryRunner.query(`DROP FUNCTION watches_deleted()`);
  }
}
