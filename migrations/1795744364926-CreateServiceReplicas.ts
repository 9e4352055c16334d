import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per service process (src/replicas/): its heartbeat, so budgets hold across replicas (each takes
 * budget / live replicas) and an upstream 429 one replica gets lowers every replica's rate. Every time is the
 * database clock. `seen_at` is refreshed every REPLICA_HEARTBEAT_MS; a row older than REPLICA_DEAD_AFTER_MS, or
 * with `stopped_at` set (graceful shutdown), is not live; rows not seen for an hour are deleted. `throttle_factor`,
 * `throttled_at` and `paused_until` are the replica's own last 429: the fraction of its maximum rate it lowered
 * to, when, and until when the upstream's Retry-After paused it. Written by that replica only.
 */
export class CreateServiceReplicas1795744364926 implements MigrationInterface {
  name = 'CreateServiceReplicas1795744364926';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE service_replicas (
        instance_id text PRIMARY KEY,
        version text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        seen_at timestamptz NOT NULL DEFAULT now(),
        stopped_at timestamptz NULL,
        throttle_factor double precision NULL CHECK (throttle_factor > 0 AND throttle_factor <= 1),
        throttled_at timestamptz NULL,
        paused_until timestamptz NULL
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE service_replicas`);
  }
}
