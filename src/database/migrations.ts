import { CreateU64Domain1763715600000 } from '../../migrations/1763715600000-CreateU64Domain';
import { CreateApiClients1795253159157 } from '../../migrations/1795253159157-CreateApiClients';
import { CreateLedgerTransactions1795355832698 } from '../../migrations/1795355832698-CreateLedgerTransactions';
import { CreateLedgerTransactionEvents1795355833105 } from '../../migrations/1795355833105-CreateLedgerTransactionEvents';

/**
 * Every migration, in order. Listed explicitly (not globbed) so the same list works from the compiled
 * service, the migration CLI and the TypeScript test runner. `npm run migration:create` appends here.
 */
export const MIGRATIONS = [
  CreateU64Domain1763715600000,
  CreateApiClients1795253159157,
  CreateLedgerTransactions1795355832698,
  CreateLedgerTransactionEvents1795355833105,
];
