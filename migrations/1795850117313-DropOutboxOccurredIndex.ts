import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `outbox_events_occurred_idx` (`occurred_at`) goes (issue 32, docs/BENCHMARKS.md "Session 18: watches cost"): no
 * statement reads events by `occurred_at`. The feed reads `(client_id, xact_id, position)`, pruning reads the feed
 * order `(xact_id, position)` and only filters its head by age (src/webhooks/outbox.repository.ts), deliveries and
 * the delivery log join events by `id`, the backlog's oldest pending age takes `min(occurred_at)` over the pending
 * deliveries' events (by `id`). Every event written paid one more index insertion for it: four per event, now
 * three. Owned by `webhooks/` (docs/webhooks.md "The outbox").
 */
export class DropOutboxOccurredIndex1795850117313 implements MigrationInterface {
  name = 'DropOutboxOccurredIndex1795850117313';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX outbox_events_occurred_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX outbox_events_occurred_idx ON outbox_events (occurred_at)`);
  }
}
