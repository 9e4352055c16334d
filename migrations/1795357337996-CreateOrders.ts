import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Checkout orders (owned by `checkout/`). A row is inserted with the client's idempotency key and the request
 * fingerprint BEFORE anything goes upstream. `state` is what the customer sees; `recovery_point` is the next
 * step a driver resumes from after a crash (revalidate, sign, submit, track, lookup, refresh, done). The
 * current attempt's derived upstream key and ledger ids are columns; earlier attempts are kept in
 * `previous_attempts`. `next_attempt_at` + lease (`lease_owner`, `lease_until`) let the recovery worker on any
 * replica claim due rows with FOR UPDATE SKIP LOCKED.
 */
export class CreateOrders1795357337996 implements MigrationInterface {
  name = 'CreateOrders1795357337996';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE orders (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id uuid NOT NULL REFERENCES api_clients (id),
        idempotency_key text NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
        fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
        request_id text NULL,
        buyer_subject text NOT NULL CHECK (char_length(buyer_subject) BETWEEN 1 AND 255),
        buyer_address text NOT NULL,
        event_id u64 NOT NULL,
        ticket_id u64 NOT NULL,
        expected_price_minor u64 NOT NULL,
        current_price_minor u64 NULL,
        stablecoin_decimals integer NULL CHECK (stablecoin_decimals BETWEEN 0 AND 18),
        state text NOT NULL CHECK (state IN ('created', 'revalidated', 'signing', 'signed', 'submitted',
          'confirmed', 'landed_with_error', 'expired', 'rejected', 'failed')),
        recovery_point text NOT NULL CHECK (recovery_point IN ('revalidate', 'sign', 'submit', 'track',
          'lookup', 'refresh', 'done')),
        attempt integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
        batch jsonb NULL,
        upstream_idempotency_key text NULL,
        transaction_record_id uuid NULL,
        custodial_transaction_id text NULL,
        transaction_signature text NULL,
        upstream_status text NULL,
        previous_attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
        failure_code text NULL,
        failure_reason text NULL,
        step_failures integer NOT NULL DEFAULT 0,
        last_error text NULL,
        next_attempt_at timestamptz NULL,
        lease_owner text NULL,
        lease_until timestamptz NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        attempt_started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        final_at timestamptz NULL,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (client_id, idempotency_key)
      )
    `);
    await queryRunner.query(
      `CREATE INDEX orders_due_idx ON orders (next_attempt_at) WHERE recovery_point <> 'done'`,
    );
    await queryRunner.query(
      `CREATE INDEX orders_client_page_idx ON orders (client_id, created_at DESC, id DESC)`,
    );
    await queryRunner.query(`CREATE INDEX orders_buyer_idx ON orders (client_id, buyer_subject, event_id)`);
    await queryRunner.query(`CREATE INDEX orders_transaction_record_idx ON orders (transaction_record_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE orders`);
  }
}
