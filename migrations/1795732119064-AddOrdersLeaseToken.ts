import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The order's fencing token (src/durable-work/lease.sql.ts): set from durable_work_token_seq by every claim
 * (and by the insert, which leases the order to its creating replica). Every write of a drive is conditional
 * on it, and so is the ledger's record of an attempt before anything is submitted. Null on rows never
 * claimed since (no holder's write can match them). A metadata-only change: no table rewrite.
 */
export class AddOrdersLeaseToken1795732119064 implements MigrationInterface {
  name = 'AddOrdersLeaseToken1795732119064';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE orders ADD COLUMN lease_token bigint NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE orders DROP COLUMN lease_token`);
  }
}
