import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-endpoint limits (docs/webhooks.md): `rate_limit`, the client's optional cap on messages per second to the
 * endpoint (null: none), with the window the senders count in (`rate_window_at`, `rate_sent`: one-second windows
 * on the database clock, shared by every replica); and the window of manual sends (`manual_window_at`,
 * `manual_sends`: pings and manual retries per minute, WEBHOOKS_MANUAL_SENDS_PER_MINUTE).
 */
export class AddWebhookEndpointLimits1795829214358 implements MigrationInterface {
  name = 'AddWebhookEndpointLimits1795829214358';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhook_endpoints
        ADD COLUMN rate_limit integer NULL CHECK (rate_limit BETWEEN 1 AND 10000),
        ADD COLUMN rate_window_at timestamptz NULL,
        ADD COLUMN rate_sent integer NOT NULL DEFAULT 0,
        ADD COLUMN manual_window_at timestamptz NULL,
        ADD COLUMN manual_sends integer NOT NULL DEFAULT 0
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhook_endpoints
        DROP COLUMN rate_limit, DROP COLUMN rate_window_at, DROP COLUMN rate_sent,
        DROP COLUMN manual_window_at, DROP COLUMN manual_sends
    `);
  }
}
