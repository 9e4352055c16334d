import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app.config';
import { SyncConfig } from './sync.config';

/** Makes the one validated AppConfig (and SyncConfig) instance injectable everywhere. */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig, sync: SyncConfig = new SyncConfig()): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: SyncConfig, useValue: sync },
      ],
      exports: [AppConfig, SyncConfig],
    };
  }
}
