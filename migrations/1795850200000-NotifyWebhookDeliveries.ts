import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every statement inserting `webhook_deliveries` notifies `webhook_deliveries` (no payload): the delivery worker of
 * every replica LISTENs (src/database/pg-listener.ts) and runs a pass at once instead of on its next timer pass.
 * A statement-level trigger, so a set-based fan-out of a sync pass (thousands of rows) costs one notification, and
 * notifications with the same channel and payload in one transaction are delivered once, at its commit (none when it
 * rolls back). It fires for an INSERT that inserts no row too: that costs one empty claim, cheaper than capturing
 * the rows to look.
 */
export class NotifyWebhookDeliveries1795850200000 implements MigrationInterface {
  name = 'NotifyWebhookDeliveries1795850200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION webhook_deliveries_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('webhook_deliveries', '');
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER webhook_deliveries_inserted AFTER INSERT ON webhook_deliveries
        FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_notify()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER webhook_deliveries_inserted ON webhook_deliveries`);
    await queryRunner.query(`DROP FUNCTION webhook_deliveries_notify()`);
  }
}
