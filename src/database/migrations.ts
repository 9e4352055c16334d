import { CreateU64Domain1763715600000 } from '../../migrations/1763715600000-CreateU64Domain';
import { CreateApiClients1795253159157 } from '../../migrations/1795253159157-CreateApiClients';
import { CreateEvents1795355803538 } from '../../migrations/1795355803538-CreateEvents';
import { CreateListings1795355804444 } from '../../migrations/1795355804444-CreateListings';
import { CreateSyncPasses1795355805474 } from '../../migrations/1795355805474-CreateSyncPasses';
import { CreateJobLeases1795355807008 } from '../../migrations/1795355807008-CreateJobLeases';
import { CreateProtocolConfig1795355807791 } from '../../migrations/1795355807791-CreateProtocolConfig';
import { CreateMirrorGeneration1795355808627 } from '../../migrations/1795355808627-CreateMirrorGeneration';
import { CreateLedgerTransactions1795355832698 } from '../../migrations/1795355832698-CreateLedgerTransactions';
import { CreateLedgerTransactionEvents1795355833105 } from '../../migrations/1795355833105-CreateLedgerTransactionEvents';
import { CreateListingsNewestIndexes1795356059963 } from '../../migrations/1795356059963-CreateListingsNewestIndexes';
import { CreateOrders1795357337996 } from '../../migrations/1795357337996-CreateOrders';
import { CreateOrderSteps1795357340634 } from '../../migrations/1795357340634-CreateOrderSteps';
import { CreateOrdersBuyerOpenIndex1795415873701 } from '../../migrations/1795415873701-CreateOrdersBuyerOpenIndex';
import { CreateDurableWorkTokenSeq1795732118617 } from '../../migrations/1795732118617-CreateDurableWorkTokenSeq';
import { AddOrdersLeaseToken1795732119064 } from '../../migrations/1795732119064-AddOrdersLeaseToken';
import { AddLedgerTransactionsLeaseToken1795732119471 } from '../../migrations/1795732119471-AddLedgerTransactionsLeaseToken';
import { AddOrdersAttemptKeys1795743050884 } from '../../migrations/1795743050884-AddOrdersAttemptKeys';
import { AddLedgerTransactionsOnFinalAttempts1795743618339 } from '../../migrations/1795743618339-AddLedgerTransactionsOnFinalAttempts';
import { AddApiClientsSubjectBinding1795744217137 } from '../../migrations/1795744217137-AddApiClientsSubjectBinding';
import { CreateWebhookEndpoints1795744114326 } from '../../migrations/1795744114326-CreateWebhookEndpoints';
import { CreateOutboxEvents1795744114756 } from '../../migrations/1795744114756-CreateOutboxEvents';
import { CreateWebhookDeliveries1795744115188 } from '../../migrations/1795744115188-CreateWebhookDeliveries';
import { CreateOutboxHorizon1795744115665 } from '../../migrations/1795744115665-CreateOutboxHorizon';
import { CreateOutboxTriggers1795746593082 } from '../../migrations/1795746593082-CreateOutboxTriggers';
import { CreateServiceReplicas1795744364926 } from '../../migrations/1795744364926-CreateServiceReplicas';
import { CreateStatusSamples1795752677505 } from '../../migrations/1795752677505-CreateStatusSamples';
import { CreateStatusSessions1795760531000 } from '../../migrations/1795760531000-CreateStatusSessions';
import { CreateOrdersFinalIndex1795752689072 } from '../../migrations/1795752689072-CreateOrdersFinalIndex';
import { CreateOrderTraces1795754004140 } from '../../migrations/1795754004140-CreateOrderTraces';
import { CreateWebhookDeliveriesFailedIndex1795756749194 } from '../../migrations/1795756749194-CreateWebhookDeliveriesFailedIndex';
import { CreateEventFreshness1795829128029 } from '../../migrations/1795829128029-CreateEventFreshness';
import { CreateEventDemand1795829129359 } from '../../migrations/1795829129359-CreateEventDemand';
import { CreateFairClaimIndexes1795829213016 } from '../../migrations/1795829213016-CreateFairClaimIndexes';
import { AddWebhookEndpointManualSends1795829214358 } from '../../migrations/1795829214358-AddWebhookEndpointManualSends';
import { CreateEndpointDisabledTrigger1795831000000 } from '../../migrations/1795831000000-CreateEndpointDisabledTrigger';
import { CreateSyncPassesRunningIndex1795831409600 } from '../../migrations/1795831409600-CreateSyncPassesRunningIndex';
import { AddWebhookEndpointRateLimit1795832000000 } from '../../migrations/1795832000000-AddWebhookEndpointRateLimit';
import { QuietHotWalkSyncEvents1795833000000 } from '../../migrations/1795833000000-QuietHotWalkSyncEvents';
import { CreateWatches1795841036203 } from '../../migrations/1795841036203-CreateWatches';
import { CreateWatchAlerts1795841036204 } from '../../migrations/1795841036204-CreateWatchAlerts';
import { CreateWatchMatchTriggers1795841036205 } from '../../migrations/1795841036205-CreateWatchMatchTriggers';
import { CreateCatalogEvents1795841037912 } from '../../migrations/1795841037912-CreateCatalogEvents';
import { CreateRemovalReasonIndexes1795841037913 } from '../../migrations/1795841037913-CreateRemovalReasonIndexes';
import { CollectInsertedListings1795841037914 } from '../../migrations/1795841037914-CollectInsertedListings';
import { CreateLedgerTransactionOrders1795841046033 } from '../../migrations/1795841046033-CreateLedgerTransactionOrders';
import { DeliveriesWithoutEventForeignKey1795850117301 } from '../../migrations/1795850117301-DeliveriesWithoutEventForeignKey';
import { DeliveriesIndexedByEvent1795850117302 } from '../../migrations/1795850117302-DeliveriesIndexedByEvent';
import { CreateOutboxAppendSet1795850117303 } from '../../migrations/1795850117303-CreateOutboxAppendSet';
import { WatchMatchSetBased1795850117304 } from '../../migrations/1795850117304-WatchMatchSetBased';
import { WatchMatchCooldownOnlyTouch1795850117310 } from '../../migrations/1795850117310-WatchMatchCooldownOnlyTouch';
import { WatchAlertsWithoutWatchForeignKey1795850117311 } from '../../migrations/1795850117311-WatchAlertsWithoutWatchForeignKey';
import { OutboxEventIdCheckWithoutRepeat1795850117312 } from '../../migrations/1795850117312-OutboxEventIdCheckWithoutRepeat';
import { DropOutboxOccurredIndex1795850117313 } from '../../migrations/1795850117313-DropOutboxOccurredIndex';
import { CatalogSubscriptionByWatch1795850117314 } from '../../migrations/1795850117314-CatalogSubscriptionByWatch';
import { OutboxEventIdsTimeOrdered1796230418647 } from '../../migrations/1796230418647-OutboxEventIdsTimeOrdered';
import { WebhookDeliveryIdsTimeOrdered1796230420097 } from '../../migrations/1796230420097-WebhookDeliveryIdsTimeOrdered';

/**
 * Every migration, in order. Listed explicitly (not globbed) so the same list works from the compiled
 * service, the migration CLI and the TypeScript test runner. `npm run migration:create` appends here.
 */
export const MIGRATIONS = [
  CreateU64Domain1763715600000,
  CreateApiClients1795253159157,
  CreateEvents1795355803538,
  CreateListings1795355804444,
  CreateSyncPasses1795355805474,
  CreateJobLeases1795355807008,
  CreateProtocolConfig1795355807791,
  CreateMirrorGeneration1795355808627,
  CreateLedgerTransactions1795355832698,
  CreateLedgerTransactionEvents1795355833105,
  CreateListingsNewestIndexes1795356059963,
  CreateOrders1795357337996,
  CreateOrderSteps1795357340634,
  CreateOrdersBuyerOpenIndex1795415873701,
  CreateDurableWorkTokenSeq1795732118617,
  AddOrdersLeaseToken1795732119064,
  AddLedgerTransactionsLeaseToken1795732119471,
  AddOrdersAttemptKeys1795743050884,
  AddLedgerTransactionsOnFinalAttempts1795743618339,
  CreateWebhookEndpoints1795744114326,
  CreateOutboxEvents1795744114756,
  CreateWebhookDeliveries1795744115188,
  CreateOutboxHorizon1795744115665,
  AddApiClientsSubjectBinding1795744217137,
  CreateServiceReplicas1795744364926,
  CreateOutboxTriggers1795746593082,
  CreateStatusSamples1795752677505,
  CreateOrdersFinalIndex1795752689072,
  CreateOrderTraces1795754004140,
  CreateWebhookDeliveriesFailedIndex1795756749194,
  CreateStatusSessions1795760531000,
  CreateEventFreshness1795829128029,
  CreateEventDemand1795829129359,
  CreateFairClaimIndexes1795829213016,
  AddWebhookEndpointManualSends1795829214358,
  CreateEndpointDisabledTrigger1795831000000,
  CreateSyncPassesRunningIndex1795831409600,
  AddWebhookEndpointRateLimit1795832000000,
  QuietHotWalkSyncEvents1795833000000,
  CreateWatches1795841036203,
  CreateWatchAlerts1795841036204,
  CreateWatchMatchTriggers1795841036205,
  CreateCatalogEvents1795841037912,
  CreateRemovalReasonIndexes1795841037913,
  CollectInsertedListings1795841037914,
  CreateLedgerTransactionOrders1795841046033,
  DeliveriesWithoutEventForeignKey1795850117301,
  DeliveriesIndexedByEvent1795850117302,
  CreateOutboxAppendSet1795850117303,
  WatchMatchSetBased1795850117304,
  WatchMatchCooldownOnlyTouch1795850117310,
  WatchAlertsWithoutWatchForeignKey1795850117311,
  OutboxEventIdCheckWithoutRepeat1795850117312,
  DropOutboxOccurredIndex1795850117313,
  CatalogSubscriptionByWatch1795850117314,
  OutboxEventIdsTimeOrdered1796230418647,
  WebhookDeliveryIdsTimeOrdered1796230420097,
];
