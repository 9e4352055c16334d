import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Single-flight across replicas: one row per job (`sync:events`, `sync:listings`, `sync:event:<id>`).
 * A holder owns the job while `expires_at` is in the future and renews it while it runs; taking over an
 * expired lease increments `fencing_token`, and every write of a pass checks its token in its transaction.
 * `pass_id` is the pass running under the lease.
 */
export class CreateJobLeases1795355807008 implements MigrationInterface {
  name = 'CreateJobLeases1795355807008';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE job_leases (
        name text PRIMARY KEY,
        holder text NOT NULL,
        fencing_token bigint NOT NULL,
        acquired_at timestamptz NOT NULL,
        renewed_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        pass_id bigint NULL
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE job_leases`);
  }
}
