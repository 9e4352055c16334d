import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sync.pass_completed` / `sync.pass_failed` announce full passes, operator passes and the event refreshes after a
 * confirmed write — not the hot set's own walks (trigger `hot`) and `?fresh=true` walks (`fresh`). With per-event
 * walks of every hot event every few seconds (docs/catalog-sync.md "Live catalog"), each one an event to every
 * operator endpoint was a flood (a chaos run left 6,274 such deliveries queued behind the endpoint's in-flight cap).
 * The trigger's function is unchanged; only its WHEN clause gains the pass's trigger.
 */
export class QuietHotWalkSyncEvents1795833000000 implements MigrationInterface {
  name = 'QuietHotWalkSyncEvents1795833000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER sync_passes_outbox_finished ON sync_passes`);
    await queryRunner.query(
      `CREATE TRIGGER sync_passes_outbox_finished AFTER UPDATE OF status ON sync_passes
         FOR EACH ROW WHEN (OLD.status = 'running' AND NEW.status <> 'running'
                            AND NEW."trigger" NOT IN ('hot', 'fresh'))
         EXECUTE FUNCTION outbox_sync_events()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER sync_passes_outbox_finished ON sync_passes`);
    await queryRunner.query(
      `CREATE TRIGGER sync_passes_outbox_finished AFTER UPDATE OF status ON sync_passes
         FOR EACH ROW WHEN (OLD.status = 'running' AND NEW.status <> 'running')
         EXECUTE FUNCTION outbox_sync_events()`,
    );
  }
}
