import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { AuthModule } from './auth/auth.module';
import { CatalogSyncModule } from './catalog-sync/catalog-sync.module';
import { CheckoutModule } from './checkout/checkout.module';
import { AppConfig } from './config/app.config';
import { AppConfigModule } from './config/app-config.module';
import type { AuthConfig } from './config/auth.config';
import type { CheckoutConfig } from './config/checkout.config';
import type { TransactionsConfig } from './config/transactions.config';
import type { SyncConfig } from './config/sync.config';
import type { ListingsConfig } from './config/listings.config';
import type { WebhooksConfig } from './config/webhooks.config';
import type { DataSourceOptions } from 'typeorm';
import { buildDataSourceOptions } from './database/data-source';
import { MigratingDataSource } from './database/migration-lock';
import { HealthModule } from './health/health.module';
import { ListingsModule } from './listings/listings.module';
import { MetricsModule } from './metrics/metrics.module';
import { StatusModule } from './status/status.module';
import { TransactionsModule } from './transactions/transactions.module';
import { UpstreamModule } from './upstream/upstream.module';
import { WatchesModule } from './watches/watches.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import type { UpstreamOptions } from './upstream/upstream.options';

export interface AppModuleOptions {
  config: AppConfig;
  /** Resolved connection URL (DATABASE_URL or the embedded cluster's). */
  databaseUrl: string;
  logger: Logger;
  auth: AuthConfig;
  /** Transactions and selling variables (default: every default). */
  transactions?: TransactionsConfig;
  /** Resolved upstream (UPSTREAM_BASE_URL or the in-process sandbox) and its tuning. */
  upstream: UpstreamOptions;
  /** Catalog sync settings (defaults when omitted). */
  sync?: SyncConfig;
  /** Checkout settings (defaults when omitted). */
  checkout?: CheckoutConfig;
  /** Read API settings (LISTINGS_*); defaults when omitted. */
  listings?: ListingsConfig;
  /** Webhooks settings (WEBHOOKS_*); defaults when omitted. */
  webhooks?: WebhooksConfig;
  /** Test fixtures only (e.g. an owned-resource controller in the auth e2e tests). */
  extraModules?: NonNullable<ModuleMetadata['imports']>;
}

@Module({})
export class AppModule {
  static forRoot(options: AppModuleOptions): DynamicModule {
    const { config, databaseUrl, logger } = options;
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(
          config,
          options.auth,
          options.sync,
          options.transactions,
          options.checkout,
          options.listings,
          options.webhooks,
        ),
        LoggerModule.forRoot({
          pinoHttp: { logger },
          // No pino-http middleware: common/logging.ts installRequestLogContext binds a lazily built
          // request logger per request, and the request line is written by the Fastify onResponse hook.
          useExisting: true,
          forRoutes: [],
        }),
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...buildDataSourceOptions({
              url: databaseUrl,
              poolSize: config.DB_POOL_SIZE,
              migrationsRun: config.MIGRATIONS_RUN,
            }),
            autoLoadEntities: true,
            retryAttempts: 3,
            retryDelay: 1000,
          }),
          // The migrations at boot (migrationsRun) hold the migration lock, like every other run.
          dataSourceFactory: (dataSourceOptions) =>
            Promise.resolve(
              new MigratingDataSource(dataSourceOptions as DataSourceOptions, {
                onIndexRepaired: ({ index, action }) =>
                  logger.warn({ index, action }, 'invalid index left by an interrupted build repaired'),
              }),
            ),
        }),
        MetricsModule,
        UpstreamModule.forRoot(options.upstream),
        HealthModule,
        AuthModule,
        TransactionsModule,
        ListingsModule,
        CatalogSyncModule,
        CheckoutModule,
        WebhooksModule,
        WatchesModule,
        StatusModule.forRoot({ pageEnabled: config.statusPageEnabled }),
        ...(options.extraModules ?? []),
      ],
    };
  }
}
