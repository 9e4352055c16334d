import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app.config';

/** Makes the one validated AppConfig instance injectable everywhere. */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
