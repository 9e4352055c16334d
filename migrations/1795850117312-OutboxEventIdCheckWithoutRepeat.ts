import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `outbox_events.id`'s check, the same rule written so that it is cheap to test (issue 32, docs/BENCHMARKS.md
 * "Session 18: watches cost"): `evt_` and exactly 32 lower-case hex digits, as before. The check ran the regular
 * expression `^evt_[0-9a-f]{32}$` on every event written; PostgreSQL's matcher builds its automaton's states afresh on
 * every call, and the 32-fold repeat makes that about 4 µs a row (200,000 ids: 0.84 s against 0.17 s for the form
 * below, same machine) — on a dense pass's 100,000 `watch.matched`, as much as a whole index. `length(id) = 36 AND
 * id ~ '^evt_[0-9a-f]+$'` accepts exactly the same strings (36 characters of which 4 are `evt_` leaves 32 hex
 * digits) with an automaton of a few states. Owned by `webhooks/` (docs/webhooks.md "The outbox").
 */
export class OutboxEventIdCheckWithoutRepeat1795850117312 implements MigrationInterface {
  name = 'OutboxEventIdCheckWithoutRepeat1795850117312';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_id_check,
        ADD CONSTRAINT outbox_events_id_check CHECK (length(id) = 36 AND id ~ '^evt_[0-9a-f]+$')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_id_check,
        ADD CONSTRAINT outbox_events_id_check CHECK (id ~ '^evt_[0-9a-f]{32}$')`);
  }
}
