import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ledger transaction's fencing token (src/durable-work/lease.sql.ts): set from durable_work_token_seq by
 * every claim (and by the insert, which leases the row to the signing replica); the holder's writes are
 * conditional on it. A metadata-only change: no table rewrite.
 */
export class AddLedgerTransactionsLeaseToken1795732119471 implements MigrationInterface {
  name = 'AddLedgerTransactionsLeaseToken1795732119471';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ledger_transactions ADD COLUMN lease_token bigint NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ledger_transactions DROP COLUMN lease_token`);
  }
}
