import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A new delivery's id is a UUIDv7 (`uuidv7()`, PostgreSQL 18) instead of a random UUIDv4 (issue 32,
 * docs/webhooks.md "The outbox", docs/BENCHMARKS.md "Session 22"): a fan-out writes one delivery per event and
 * endpoint (100,000 for a pass changing 10,000 prices with 10 endpoints), and a random id put each on a random leaf
 * of `webhook_deliveries_pkey`; ids that grow go to its rightmost leaf. The API shows the id as before (a UUID);
 * nothing orders by it alone (the delivery log's tie-break after `created_at` only).
 */
export class WebhookDeliveryIdsTimeOrdered1796230420097 implements MigrationInterface {
  name = 'WebhookDeliveryIdsTimeOrdered1796230420097';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE webhook_deliveries ALTER COLUMN id SET DEFAULT uuidv7()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE webhook_deliveries ALTER COLUMN id SET DEFAULT gen_random_uuid()`);
  }
}
