import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ledger transactions signed through this service (owned by `transactions/`). A row is inserted with the
 * caller's idempotency key, the derived upstream key and the request fingerprint BEFORE the upstream is
 * called (phase `signing`), so a crash or a lost response leaves a row whose retry reuses the same key.
 * `custodial_transaction_id` (the upstream's id, the public key of the record) is filled once signed.
 * `next_attempt_at` is set while there is background work (an unknown signing, a submitted transaction
 * without a final status, a pending after-final handler); the tracker claims due rows with
 * FOR UPDATE SKIP LOCKED and holds them by lease (`lease_owner`, `lease_until`).
 */
export class CreateLedgerTransactions1795355832698 implements MigrationInterface {
  name = 'CreateLedgerTransactions1795355832698';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE ledger_transactions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id uuid NOT NULL REFERENCES api_clients (id),
        idempotency_key text NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
        upstream_idempotency_key text NOT NULL CHECK (char_length(upstream_idempotency_key) BETWEEN 1 AND 255),
        fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
        kind text NOT NULL CHECK (kind IN ('user', 'integrator')),
        subject text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 255),
        instruction text NOT NULL CHECK (instruction IN ('accept_offer_v2', 'cancel_listing_v1', 'list_ticket_v2')),
        request jsonb NOT NULL,
        request_id text NULL,
        on_final text NULL,
        submit_on_sign boolean NOT NULL DEFAULT false,
        phase text NOT NULL CHECK (phase IN ('signing', 'signed', 'sign_rejected')),
        sign_error jsonb NULL,
        custodial_transaction_id text NULL CHECK (custodial_transaction_id ~ '^[0-9a-fA-F]{64}$'),
        signer_address text NULL,
        fee_payer_address text NULL,
        signed_transaction text NULL,
        signed_transaction_digest text NULL,
        message text NULL,
        signature text NULL,
        fee_payer_signature text NULL,
        required_signers text[] NULL,
        recent_blockhash text NULL,
        additional_signatures jsonb NULL,
        status text NULL CHECK (status IN ('processing', 'confirmed', 'landed_with_error', 'expired')),
        failure_reason text NULL,
        sign_attempts integer NOT NULL DEFAULT 0,
        submit_attempts integer NOT NULL DEFAULT 0,
        last_error text NULL,
        tracking_stopped text NULL CHECK (tracking_stopped IN ('rejected', 'gave_up')),
        on_final_done_at timestamptz NULL,
        next_attempt_at timestamptz NULL,
        give_up_at timestamptz NULL,
        lease_owner text NULL,
        lease_until timestamptz NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        signed_at timestamptz NULL,
        submitted_at timestamptz NULL,
        final_at timestamptz NULL,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        CHECK (phase <> 'signed' OR (custodial_transaction_id IS NOT NULL AND signed_transaction IS NOT NULL))
      )
    `);
    await queryRunner.query(
      `CREATE UNIQUE INDEX ledger_transactions_client_key_key ON ledger_transactions (client_id, idempotency_key)`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX ledger_transactions_custodial_id_key ON ledger_transactions (custodial_transaction_id)`,
    );
    await queryRunner.query(
      `CREATE INDEX ledger_transactions_digest_idx ON ledger_transactions (signed_transaction_digest)`,
    );
    await queryRunner.query(
      `CREATE INDEX ledger_transactions_due_idx ON ledger_transactions (next_attempt_at) WHERE next_attempt_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX ledger_transactions_open_idx ON ledger_transactions (created_at) WHERE final_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ledger_transactions`);
  }
}
