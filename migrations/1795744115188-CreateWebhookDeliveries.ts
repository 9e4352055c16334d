import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One event to one endpoint (owned by `webhooks/`), inserted with the event (the fan-out). Durable work
 * (docs/durable-work.md): `next_attempt_at` + the lease columns (`lease_owner`, `lease_until` on the database
 * clock, `lease_token` the fencing token of the claim) let any replica claim due rows with SKIP LOCKED.
 * `attempts` counts the sends started; `last_error` is a bounded excerpt (never a secret).
 */
export class CreateWebhookDeliveries1795744115188 implements MigrationInterface {
  name = 'CreateWebhookDeliveries1795744115188';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_id text NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        next_attempt_at timestamptz NULL,
        last_attempt_at timestamptz NULL,
        last_status_code integer NULL,
        last_error text NULL CHECK (char_length(last_error) <= 1000),
        last_duration_ms integer NULL,
        delivered_at timestamptz NULL,
        lease_owner text NULL,
        lease_until timestamptz NULL,
        lease_token bigint NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (endpoint_id, event_id)
      )
    `);
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`,
    );
    await queryRunner.query(`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_deliveries`);
  }
}
