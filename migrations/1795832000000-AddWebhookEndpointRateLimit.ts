import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An endpoint's optional `rate_limit` (messages per second, docs/webhooks.md) and the next free send slot
 * (`next_send_at`, database clock): a send reserves a slot on the endpoint row, shared by every replica; a delivery
 * whose slot is later is given back due at that slot.
 */
export class AddWebhookEndpointRateLimit1795832000000 implements MigrationInterface {
  name = 'AddWebhookEndpointRateLimit1795832000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhook_endpoints
        ADD COLUMN rate_limit integer NULL CHECK (rate_limit BETWEEN 1 AND 1000),
        ADD COLUMN next_send_at timestamptz NULL
    `);
    // A delivery given back to wait for its reserved slot holds it: when due again it is sent without reserving
    // another (else every return would reserve anew behind the others, and nothing would ever be sent).
    await queryRunner.query(`ALTER TABLE webhook_deliveries ADD COLUMN send_slot_at timestamptz NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE webhook_deliveries DROP COLUMN send_slot_at`);
    await queryRunner.query(`ALTER TABLE webhook_endpoints DROP COLUMN rate_limit, DROP COLUMN next_send_at`);
  }
}
