import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app.config';
import { loadTransactionsConfig, TransactionsConfig } from './transactions.config';

/** Makes the validated AppConfig (and TransactionsConfig) instances injectable everywhere. */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(
    config: AppConfig,
    transactions: TransactionsConfig = loadTransactionsConfig({}),
  ): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: TransactionsConfig, useValue: transactions },
      ],
      exports: [AppConfig, TransactionsConfig],
    };
  }
}
