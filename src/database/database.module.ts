import { Module } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { pgPool } from './data-source';
import { PgListener } from './pg-listener';

/**
 * Injection token of the pg `Pool` behind the app's TypeORM data source: the one pool, for the SQL that
 * bypasses the ORM (sync passes on a held connection, named prepared statements, keyset pages, lease
 * claims). Inject it with `@Inject(PG_POOL) pool: Pool`; never reach into the data source's driver.
 */
export const PG_POOL = 'PG_POOL';

/**
 * Provides PG_POOL. The data source (TypeOrmModule.forRootAsync in AppModule) is initialized before this
 * factory runs, so its pool exists. The pool gate (pool-gate.ts) is installed on this same object at boot
 * (app.factory.ts): every connection still comes through `pool.connect`, so the gate applies to every user.
 * Also the process's one LISTEN connection (PgListener), for the modules that take NOTIFY as a hint.
 */
@Module({
  providers: [
    {
      provide: PG_POOL,
      useFactory: (dataSource: DataSource): Pool => pgPool(dataSource),
      inject: [DataSource],
    },
    PgListener,
  ],
  exports: [PG_POOL, PgListener],
})
export class DatabaseModule {}
