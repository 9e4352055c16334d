import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AppConfig } from './app.config';
import { AuthConfig } from './auth.config';
import { CheckoutConfig, loadCheckoutConfig } from './checkout.config';
import { ListingsConfig } from './listings.config';
import { SyncConfig } from './sync.config';
import { loadTransactionsConfig, TransactionsConfig } from './transactions.config';
import { loadWebhooksConfig, WebhooksConfig } from './webhooks.config';

/** Makes the validated AppConfig (and AuthConfig, SyncConfig, TransactionsConfig, ListingsConfig, WebhooksConfig) instances injectable everywhere. */
// Global: configuration is read by nearly every module, validated once at boot and never changes.
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(
    config: AppConfig,
    auth: AuthConfig,
    sync: SyncConfig = new SyncConfig(),
    transactions: TransactionsConfig = loadTransactionsConfig({}),
    checkout: CheckoutConfig = loadCheckoutConfig({}),
    listings: ListingsConfig = new ListingsConfig(),
    webhooks: WebhooksConfig = loadWebhooksConfig({}),
  ): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: AuthConfig, useValue: auth },
        { provide: SyncConfig, useValue: sync },
        { provide: TransactionsConfig, useValue: transactions },
        { provide: CheckoutConfig, useValue: checkout },
        { provide: ListingsConfig, useValue: listings },
        { provide: WebhooksConfig, useValue: webhooks },
      ],
      exports: [
        AppConfig,
        AuthConfig,
        SyncConfig,
        TransactionsConfig,
        CheckoutConfig,
        ListingsConfig,
        WebhooksConfig,
      ],
    };
  }
}
