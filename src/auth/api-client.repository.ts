import { Injectable } from '@nestjs/common';
import { DataSource, type Repository } from 'typeorm';
import { ApiClientEntity } from './api-client.entity';
import type { Scope } from './scopes';

/** What authentication needs: the row behind a lookup prefix, hash included. */
export interface ApiClientCredential {
  id: string;
  name: string;
  scopes: Scope[];
  keyHash: Buffer;
  revokedAt: Date | null;
  userSubjectPatterns: string[] | null;
  integratorSubjectPatterns: string[] | null;
}

export interface NewApiClient {
  name: string;
  keyPrefix: string;
  keyHash: Buffer;
  scopes: Scope[];
  createdBy: string | null;
  /** Subject binding: both null or absent for an unbound key. */
  userSubjectPatterns?: string[] | null;
  integratorSubjectPatterns?: string[] | null;
}

export interface ListPosition {
  createdAt: Date;
  id: string;
}

export interface ListApiClientsQuery {
  /** undefined: every client (CLI); a client id: only the clients that admin client issued. */
  createdBy?: string;
  limit: number;
  /** Keyset cursor: rows strictly after this one in (created_at DESC, id DESC) order. */
  after?: ListPosition;
}

/** Rounds of the revocation cascade; each catches keys issued while the previous one waited on locks. */
const MAX_CASCADE_ROUNDS = 8;

/**
 * The only code that reads or writes `api_clients`, over the DataSource of its Nest context: the app's
 * (AuthModule) or the `keys` CLI's own (KeysCliModule).
 */
@Injectable()
export class ApiClientRepository {
  private readonly rows: Repository<ApiClientEntity>;

  constructor(dataSource: DataSource) {
    this.rows = dataSource.getRepository(ApiClientEntity);
  }

  /**
   * Inserts a client. With an issuer, the issuer's row is locked (FOR SHARE) and must not be revoked:
   * a revocation (an UPDATE of that row) and an issue therefore serialise, so a key issued while its
   * issuer is being revoked is either refused (null) or already visible to the revocation cascade.
   */
  async insert(client: NewApiClient): Promise<ApiClientEntity | null> {
    return this.rows.manager.transaction(async (manager) => {
      if (client.createdBy !== null) {
        const issuer: unknown[] = await manager.query(
          `SELECT id FROM api_clients WHERE id = $1 AND revoked_at IS NULL FOR SHARE`,
          [client.createdBy],
        );
        if (issuer.length === 0) return null;
      }
      const result = await manager.insert(ApiClientEntity, client);
      const id = (result.identifiers[0] as { id: string }).id;
      return manager.findOneByOrFail(ApiClientEntity, { id });
    });
  }

  /**
   * Inserts an outside key with no issuer unless its lookup prefix (or hash) is already taken: null then, and
   * nothing raised. Replicas booting together with the same BFF_BOOTSTRAP_API_KEY all get here at once; a
   * plain INSERT failed all but one of them on the unique index, and their startup with it.
   */
  async insertUnlessTaken(client: Omit<NewApiClient, 'createdBy'>): Promise<ApiClientEntity | null> {
    const result = await this.rows
      .createQueryBuilder()
      .insert()
      .into(ApiClientEntity)
      .values({ ...client, createdBy: null })
      .orIgnore()
      .returning('id')
      .execute();
    const id = (result.raw as { id: string }[])[0]?.id;
    return id === undefined ? null : this.rows.findOneByOrFail({ id });
  }

  async findCredential(keyPrefix: string): Promise<ApiClientCredential | null> {
    return this.rows.findOne({
      where: { keyPrefix },
      select: {
        id: true,
        name: true,
        scopes: true,
        keyHash: true,
        revokedAt: true,
        userSubjectPatterns: true,
        integratorSubjectPatterns: true,
      },
    });
  }

  async findById(id: string, createdBy?: string): Promise<ApiClientEntity | null> {
    return this.rows.findOneBy(createdBy === undefined ? { id } : { id, createdBy });
  }

  async list(query: ListApiClientsQuery): Promise<ApiClientEntity[]> {
    const qb = this.rows.createQueryBuilder('c');
    if (query.createdBy !== undefined)
      qb.andWhere('c.created_by = :createdBy', { createdBy: query.createdBy });
    if (query.after) {
      qb.andWhere('(c.created_at, c.id) < (:afterAt, :afterId)', {
        afterAt: query.after.createdAt,
        afterId: query.after.id,
      });
    }
    return qb.orderBy('c.created_at', 'DESC').addOrderBy('c.id', 'DESC').limit(query.limit).getMany();
  }

  /**
   * Revokes a client and every client it issued, transitively (keys must not outlive the admin key
   * that issued them), in one transaction. revoked_at is set once: an already revoked client keeps its
   * first revocation time. Returns the row and the ids of the issued keys this call revoked, or null
   * when no such client (owned by `createdBy`, when given) exists.
   *
   * Racing issues: `insert` holds FOR SHARE on the issuer's row. Locking the root FOR UPDATE first
   * waits for every issue already under way; the cascade statement that follows takes a fresh snapshot
   * (READ COMMITTED), so it sees them, and later issues find the issuer revoked. A key issued by a
   * descendant while the cascade waited on that descendant's row lock committed before the wait ended,
   * so the cascade is repeated until a round revokes nothing new (bounded).
   */
  async revoke(
    id: string,
    createdBy?: string,
  ): Promise<{ row: ApiClientEntity; alsoRevoked: string[] } | null> {
    return this.rows.manager.transaction(async (manager) => {
      const locked: unknown[] = await manager.query(
        `SELECT id FROM api_clients WHERE id = $1 ${createdBy === undefined ? '' : 'AND created_by = $2'} FOR UPDATE`,
        createdBy === undefined ? [id] : [id, createdBy],
      );
      if (locked.length === 0) return null;
      const alsoRevoked: string[] = [];
      for (let round = 0; round < MAX_CASCADE_ROUNDS; round++) {
        // UNION (not UNION ALL) ends the walk even on a (never expected) created_by cycle.
        const revoked: { id: string }[] = await manager.query(
          `WITH RECURSIVE issued(id) AS (
             SELECT id FROM api_clients WHERE id = $1
             UNION
             SELECT c.id FROM api_clients c JOIN issued i ON c.created_by = i.id
           ), revoked AS (
             UPDATE api_clients SET revoked_at = now()
             WHERE id IN (SELECT id FROM issued) AND revoked_at IS NULL
             RETURNING id
           )
           SELECT id FROM revoked`,
          [id],
        );
        alsoRevoked.push(...revoked.map((r) => r.id).filter((revokedId) => revokedId !== id));
        if (round > 0 && revoked.length === 0) break;
      }
      const row = await manager.findOneByOrFail(ApiClientEntity, { id });
      return { row, alsoRevoked };
    });
  }

  async touchLastUsed(id: string): Promise<void> {
    await this.rows.update({ id }, { lastUsedAt: () => 'now()' });
  }
}
