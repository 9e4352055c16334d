import { createHash } from 'node:crypto';
import type { Pool, QueryResultRow } from 'pg';

/**
 * Named prepared statements on the app's pg pool (DatabaseModule's PG_POOL): a statement is parsed (and, once
 * PostgreSQL settles on a generic plan, planned) once per pooled connection instead of on every call, and the
 * call skips TypeORM's query-runner round (checkout, release, broadcaster). For statements whose text comes
 * from a bounded set of fixed fragments (never inlined values: each distinct text is a statement on every
 * connection) and whose best plan does not depend on the values (primary-key and unique-key lookups and
 * updates). Connections still come through `pool.connect`, so the pool gate (database/pool-gate.ts) applies.
 */
export class PreparedStatements {
  private readonly names = new Map<string, string>();

  constructor(
    private readonly pool: Pool,
    private readonly prefix: string,
  ) {}

  async rows<T extends QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `${this.prefix}_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
      this.names.set(text, name);
    }
    return (await this.pool.query<T>({ name, text, values })).rows;
  }
}
