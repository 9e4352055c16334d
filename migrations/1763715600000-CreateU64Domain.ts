import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Postgres bigint is signed (max 2^63-1): u64 identifiers and amounts need numeric(20,0) with a range check. */
export class CreateU64Domain1763715600000 implements MigrationInterface {
  name = 'CreateU64Domain1763715600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE DOMAIN u64 AS numeric(20,0) CHECK (VALUE >= 0 AND VALUE <= 18446744073709551615)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP DOMAIN u64`);
  }
}
