import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * The only code that reads or writes `status_sessions` (migration CreateStatusSessions): the status page's login
 * sessions, so a logout ends a session on every replica. Expiry is compared on the database clock.
 */
@Injectable()
export class StatusSessionRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Records a new session of `clientId` lasting `ttlMs` (database clock); drops sessions long expired. */
  async open(id: string, clientId: string, ttlMs: number): Promise<void> {
    await this.dataSource.query(
      `WITH pruned AS (DELETE FROM status_sessions WHERE expires_at < now() - interval '1 hour')
       INSERT INTO status_sessions (id, client_id, expires_at)
       VALUES ($1, $2, now() + $3 * interval '1 millisecond')`,
      [id, clientId, ttlMs],
    );
  }

  /** Whether session `id` of `clientId` exists, has not ended and has not expired. */
  async isActive(id: string, clientId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM status_sessions
       WHERE id = $1 AND client_id = $2 AND ended_at IS NULL AND expires_at > now()`,
      [id, clientId],
    );
    return rows.length > 0;
  }

  /** Ends session `id` (idempotent). */
  async end(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE status_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL`,
      [id],
    );
  }
}
