import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app.config';
import { CheckoutConfig, loadCheckoutConfig } from './checkout.config';
import { SyncConfig } from './sync.config';
import { loadTransactionsConfig, TransactionsConfig } from './transactions.config';

/** Makes the validated AppConfig (and TransactionsConfig, SyncConfig) instances injectable everywhere. */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(
    config: AppConfig,
    transactions: TransactionsConfig = loadTransactionsConfig({}),
    sync: SyncConfig = new SyncConfig(),
    checkout: CheckoutConfig = loadCheckoutConfig({}),
  ): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: TransactionsConfig, useValue: transactions },
        { provide: SyncConfig, useValue: sync },
        { provide: CheckoutConfig, useValue: checkout },
      ],
      exports: [AppConfig, TransactionsConfig, SyncConfig, CheckoutConfig],
    };
  }
}
