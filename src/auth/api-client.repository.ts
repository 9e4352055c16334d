import type { DataSource, Repository } from 'typeorm';
import { ApiClientEntity } from './api-client.entity';
import type { Scope } from './scopes';

/** What authentication needs: the row behind a lookup prefix, hash included. */
export interface ApiClientCredential {
  id: string;
  name: string;
  scopes: Scope[];
  keyHash: Buffer;
  revokedAt: Date | null;
}

export interface NewApiClient {
  name: string;
  keyPrefix: string;
  keyHash: Buffer;
  scopes: Scope[];
  createdBy: string | null;
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

/**
 * The only code that reads or writes `api_clients`. Plain class over a DataSource so the service
 * (Nest) and the `keys` CLI (no Nest) share it.
 */
export class ApiClientRepository {
  private readonly rows: Repository<ApiClientEntity>;

  constructor(dataSource: DataSource) {
    this.rows = dataSource.getRepository(ApiClientEntity);
  }

  async insert(client: NewApiClient): Promise<ApiClientEntity> {
    const result = await this.rows.insert(client);
    const id = (result.identifiers[0] as { id: string }).id;
    return this.rows.findOneByOrFail({ id });
  }

  async findCredential(keyPrefix: string): Promise<ApiClientCredential | null> {
    return this.rows.findOne({
      where: { keyPrefix },
      select: { id: true, name: true, scopes: true, keyHash: true, revokedAt: true },
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
   * Sets revoked_at once (an already revoked client keeps its first revocation time).
   * Returns the row, or null when no such client (owned by `createdBy`, when given) exists.
   */
  async revoke(id: string, createdBy?: string): Promise<ApiClientEntity | null> {
    const found = await this.findById(id, createdBy);
    if (!found) return null;
    if (!found.revokedAt) {
      await this.rows
        .createQueryBuilder()
        .update()
        .set({ revokedAt: () => 'now()' })
        .where('id = :id AND revoked_at IS NULL', { id })
        .execute();
    }
    return this.rows.findOneByOrFail({ id });
  }

  async touchLastUsed(id: string): Promise<void> {
    await this.rows.update({ id }, { lastUsedAt: () => 'now()' });
  }
}
