import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook endpoints (owned by `webhooks/`): where a client wants its events pushed. `secret` and
 * `previous_secret` are the Standard Webhooks signing secrets, encrypted (AES-256-GCM, src/webhooks/secret-box.ts);
 * the previous one keeps signing until `previous_secret_until` after a rotation. `event_types` filters (empty:
 * every type); `operator_events` (set from the creating key's `admin` scope) lets sync events reach it.
 * `failing_since` is the first failure of an unbroken run of failures; past WEBHOOKS_DISABLE_AFTER_HOURS the
 * endpoint is disabled with `disabled_reason`.
 */
export class CreateWebhookEndpoints1795744114326 implements MigrationInterface {
  name = 'CreateWebhookEndpoints1795744114326';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id uuid NOT NULL REFERENCES api_clients (id),
        url text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
        description text NULL CHECK (char_length(description) <= 500),
        event_types text[] NOT NULL DEFAULT '{}',
        operator_events boolean NOT NULL DEFAULT false,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text NULL,
        disabled_at timestamptz NULL,
        secret bytea NOT NULL,
        previous_secret bytea NULL,
        previous_secret_until timestamptz NULL,
        failing_since timestamptz NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )
    `);
    // The fan-out of every append reads the enabled endpoints of one client (or the operator ones).
    await queryRunner.query(
      `CREATE INDEX webhook_endpoints_fanout_idx ON webhook_endpoints (client_id) WHERE enabled`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_endpoints_client_page_idx ON webhook_endpoints (client_id, created_at DESC, id DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_endpoints`);
  }
}
