import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The window of an endpoint's manual sends (docs/webhooks.md): pings and manual retries are counted per endpoint in
 * one-minute windows on the database clock (`manual_window_at`, `manual_sends`), shared by every replica; past
 * WEBHOOKS_MANUAL_SENDS_PER_MINUTE the API answers 429 until the window ends.
 */
export class AddWebhookEndpointManualSends1795829214358 implements MigrationInterface {
  name = 'AddWebhookEndpointManualSends1795829214358';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhook_endpoints
        ADD COLUMN manual_window_at timestamptz NULL,
        ADD COLUMN manual_sends integer NOT NULL DEFAULT 0 CHECK (manual_sends >= 0)
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE webhook_endpoints DROP COLUMN manual_window_at, DROP COLUMN manual_sends`,
    );
  }
}
