import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app.config';
import { ListingsConfig } from './listings.config';
import { SyncConfig } from './sync.config';

/** Makes the one validated AppConfig (and SyncConfig, ListingsConfig) instance injectable everywhere. */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(
    config: AppConfig,
    sync: SyncConfig = new SyncConfig(),
    listings: ListingsConfig = new ListingsConfig(),
  ): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: SyncConfig, useValue: sync },
        { provide: ListingsConfig, useValue: listings },
      ],
      exports: [AppConfig, SyncConfig, ListingsConfig],
    };
  }
}
