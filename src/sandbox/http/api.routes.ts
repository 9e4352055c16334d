import type { FastifyInstance, FastifyRequest } from 'fastify';
import { eventsPage, listingsPage } from '../operations/indexer.operation';
import { purchaseStatus } from '../operations/purchase-status.operation';
import type { SandboxCore } from '../sandbox.core';
import type { PendingWaits } from './io';
import { registerOperation } from './operation.route';
import { jsonReply } from './reply';
import { GENERATED_INTEGRATOR_SUBJECT } from '../ledger/generator';
import { signTransaction } from '../operations/signing.operation';
import { submitTransaction } from '../operations/submission.operation';

type Query = Record<string, string | string[] | undefined>;
const query = (request: FastifyRequest): Query => request.query as Query;
const subject = (request: FastifyRequest): string => (request.params as { subject?: string }).subject ?? '';

/** The contract's operations (part 4), with the paths docs/sandbox.md fixes for the ones it does not show. */
export function registerApiRoutes(app: FastifyInstance, core: SandboxCore, waits: PendingWaits): void {
  registerOperation(app, core, waits, {
    method: 'GET',
    url: '/indexer/events/upcoming',
    operation: 'events',
    permission: 'read',
    handle: (request, { plan }) => eventsPage(core, query(request), plan),
  });
  registerOperation(app, core, waits, {
    method: 'GET',
    url: '/indexer/listings/active',
    operation: 'listings',
    permission: 'read',
    handle: (request, { plan }) => listingsPage(core, query(request), plan),
  });
  registerOperation(app, core, waits, {
    method: 'GET',
    url: '/indexer/protocol-config',
    operation: 'protocolConfig',
    permission: 'read',
    handle: (_request, { plan }) =>
      jsonReply(200, {
        stablecoin_mint: core.keys.stablecoinMint,
        stablecoin_decimals: core.options.stablecoinDecimals,
        fee_payer: core.keys.feePayer.publicKey.toBase58(),
        program_id: core.keys.programId.toBase58(),
        integrator_authority: core.keys.address('integrator', GENERATED_INTEGRATOR_SUBJECT),
        integrator_identity: core.keys.syntheticAddress('integrator-identity'),
        blockhash_lifetime_seconds: Math.floor(core.options.blockhashLifetimeMs / 1000),
        ...(plan.extraFields ? { x_sandbox_extra: { note: 'unknown field injected by a fault' } } : {}),
      }),
  });
  for (const [kind, operation] of [
    ['users', 'signUser'],
    ['integrators', 'signIntegrator'],
  ] as const) {
    registerOperation(app, core, waits, {
      method: 'POST',
      url: `/wallets/${kind}/:subject/signatures`,
      operation,
      permission: 'sign',
      handle: (request, { apiKeyName }) =>
        signTransaction(core, {
          operation,
          subject: subject(request),
          idempotencyKey: request.headers['idempotency-key'],
          apiKeyName,
          body: request.body,
        }),
    });
  }
  registerOperation(app, core, waits, {
    method: 'POST',
    url: '/transactions/submissions',
    operation: 'submit',
    permission: 'submit',
    handle: (request, { plan }) => submitTransaction(core, request.body, plan),
  });
  registerOperation(app, core, waits, {
    method: 'GET',
    url: '/claim_wallets/purchase-status',
    operation: 'purchaseStatus',
    permission: 'purchase',
    handle: (request, { apiKeyName, plan }) =>
      purchaseStatus(core, apiKeyName, query(request)['idempotency-key'], plan.extraFields),
  });
}
