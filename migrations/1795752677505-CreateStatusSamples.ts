import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator status page's time series (src/status/, docs/status.md): one row per minute per figure (per
 * label, e.g. an order outcome or an upstream operation) and, for figures each process counts in memory (upstream
 * requests), per replica — summed when read. Figures derived from the database (orders finalised in a minute) are
 * written once for every replica (`instance_id = ''`, INSERT … ON CONFLICT DO NOTHING); per-process counters add
 * to their replica's row. `minute` is the database clock truncated to the minute. Rows older than
 * STATUS_RETENTION_HOURS are deleted by the recorder, so the table stays small (a few thousand rows a day).
 */
export class CreateStatusSamples1795752677505 implements MigrationInterface {
  name = 'CreateStatusSamples1795752677505';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE status_samples (
        figure text NOT NULL CHECK (char_length(figure) BETWEEN 1 AND 64),
        label text NOT NULL DEFAULT '' CHECK (char_length(label) <= 64),
        instance_id text NOT NULL DEFAULT '',
        minute timestamptz NOT NULL CHECK (date_trunc('minute', minute) = minute),
        value double precision NOT NULL,
        PRIMARY KEY (figure, minute, label, instance_id)
      )
    `);
    await queryRunner.query(`CREATE INDEX status_samples_minute_idx ON status_samples (minute)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE status_samples`);
  }
}
