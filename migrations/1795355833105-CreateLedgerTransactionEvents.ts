import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Append-only history of each ledger transaction: every phase or status change and every background
 * attempt (with the replica that made it, its start and end), so an operator can replay what happened.
 * A trigger refuses UPDATE and DELETE.
 */
export class CreateLedgerTransactionEvents1795355833105 implements MigrationInterface {
  name = 'CreateLedgerTransactionEvents1795355833105';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE ledger_transaction_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        transaction_id uuid NOT NULL REFERENCES ledger_transactions (id),
        at timestamptz NOT NULL DEFAULT clock_timestamp(),
        type text NOT NULL CHECK (type IN ('created', 'signed', 'sign_failed', 'sign_rejected', 'submitted',
          'status', 'submit_failed', 'submit_rejected', 'gave_up', 'attempt', 'on_final')),
        phase text NOT NULL,
        status text NULL,
        failure_reason text NULL,
        detail text NULL,
        actor text NOT NULL,
        started_at timestamptz NULL
      )
    `);
    await queryRunner.query(
      `CREATE INDEX ledger_transaction_events_tx_idx ON ledger_transaction_events (transaction_id, id)`,
    );
    await queryRunner.query(`
      CREATE FUNCTION ledger_transaction_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'ledger_transaction_events is append-only';
      END $$
    `);
    await queryRunner.query(`
      CREATE TRIGGER ledger_transaction_events_append_only BEFORE UPDATE OR DELETE ON ledger_transaction_events
      FOR EACH ROW EXECUTE FUNCTION ledger_transaction_events_append_only()
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ledger_transaction_events`);
    await queryRunner.query(`DROP FUNCTION ledger_transaction_events_append_only()`);
  }
}
