import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

/**
 * Environment variables of the `transactions/` module (signing, submission and the background tracker)
 * and of selling (`listings/` write half). Documented in `.env.example`; a unit test keeps both in step.
 */
export class TransactionsConfig {
  /** Largest `params` array a signing request may carry (the contract sets no maximum). */
  @EnvInt(1, 100)
  TX_MAX_PARAMS = 10;

  /** Run the background tracker on this replica (every replica normally runs it). */
  @EnvBool()
  TX_TRACKER_ENABLED = true;

  /** How often the tracker looks for due work (ms). */
  @EnvInt(10, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 'pause between tracker passes: the latency of every tracker retry after its delay',
    where: 'transactions/transactions.tracker.ts',
  })
  TX_TRACKER_INTERVAL_MS = 500;

  /** Rows one tracker tick claims at most. */
  @EnvInt(1, 1000)
  @Retried({
    unit: 'count',
    bounds: 'rows one tracker works at once',
    where: 'transactions/transactions.tracker.ts',
  })
  TX_TRACKER_BATCH = 20;

  /** How long a claim (a request's signing call or a tracker's attempt) holds a row (ms). */
  @EnvInt(1000, 600_000)
  @Retried({
    unit: 'ms',
    bounds: "a claim's hold on a row (request's signing or tracker's attempt); also the first-look delay",
    where: 'transactions/',
  })
  TX_LEASE_MS = 30_000;

  /** First re-submission delay; doubles per attempt up to TX_RESUBMIT_MAX_DELAY_MS (ms). */
  @EnvInt(10, 600_000)
  @Retried({
    unit: 'ms',
    bounds: "backoff ceiling of a row's next tracker look after its first try (doubles per try)",
    where: 'transactions/transactions.backoff.ts',
  })
  TX_RESUBMIT_BASE_DELAY_MS = 500;

  @EnvInt(10, 600_000)
  @Retried({
    unit: 'ms',
    bounds: "largest backoff ceiling; Retry-After honoured up to the ledger queue's cap (policy)",
    where: 'transactions/transactions.backoff.ts',
  })
  TX_RESUBMIT_MAX_DELAY_MS = 5_000;

  /**
   * The upstream's blockhash lifetime (ms). Tracking gives up TX_GIVE_UP_GRACE_MS after signing time plus
   * this, when no final status was seen by then (the transaction can no longer land).
   */
  @EnvInt(1000, 3_600_000)
  @Retried({
    unit: 'ms',
    bounds: 'with TX_GIVE_UP_GRACE_MS: the tracker gives up this long after signing',
    where: 'transactions/transactions.signer.ts, submitter.ts',
  })
  TX_BLOCKHASH_LIFETIME_MS = 60_000;

  @EnvInt(0, 3_600_000)
  @Retried({
    unit: 'ms',
    bounds: 'added to the blockhash lifetime before the tracker gives up',
    where: 'transactions/transactions.signer.ts, submitter.ts',
  })
  TX_GIVE_UP_GRACE_MS = 60_000;

  /** How long the tracker keeps retrying a signing whose outcome is unknown (same key), ms. */
  @EnvInt(1000, 86_400_000)
  @Retried({
    unit: 'ms',
    bounds: 'age (since created) until which the tracker repeats a signing whose outcome is unknown',
    where: 'transactions/ledger-transaction.repository.ts',
  })
  TX_SIGN_RESOLVE_WINDOW_MS = 3_600_000;

  /** Secret mixed into the derived upstream idempotency key (HMAC). Empty: a fixed development value. */
  @IsOptional()
  @IsString()
  @MaxLength(512, { message: 'TX_IDEMPOTENCY_SECRET must be at most 512 characters' })
  TX_IDEMPOTENCY_SECRET?: string;

  /** Selling: integrator identity for list_ticket_v2. Unset: the protocol config's `integrator_identity`. */
  @IsOptional()
  @Matches(/^\S{1,128}$/, { message: 'SELLING_INTEGRATOR_IDENTITY must be an address (1..128 non-space)' })
  SELLING_INTEGRATOR_IDENTITY?: string;

  /** Selling: listing integrator authority. Unset: the protocol config's `integrator_authority`. */
  @IsOptional()
  @Matches(/^\S{1,128}$/, { message: 'SELLING_INTEGRATOR_AUTHORITY must be an address (1..128 non-space)' })
  SELLING_INTEGRATOR_AUTHORITY?: string;

  /** Selling: storage fee payer. Unset: the protocol config's `fee_payer`. */
  @IsOptional()
  @Matches(/^\S{1,128}$/, { message: 'SELLING_STORAGE_FEE_PAYER must be an address (1..128 non-space)' })
  SELLING_STORAGE_FEE_PAYER?: string;

  /** Selling: stablecoin mint. Unset: the protocol config's `stablecoin_mint`. */
  @IsOptional()
  @Matches(/^\S{1,128}$/, { message: 'SELLING_STABLECOIN_MINT must be an address (1..128 non-space)' })
  SELLING_STABLECOIN_MINT?: string;

  /** Selling: longest accepted `expires_at` horizon from now (seconds; default 366 days). */
  @EnvInt(60, 10 * 366 * 86_400)
  SELLING_MAX_EXPIRY_SECONDS = 366 * 86_400;
}

/** Development value of TX_IDEMPOTENCY_SECRET (the derived key only needs to be stable, not secret). */
export const DEVELOPMENT_IDEMPOTENCY_SECRET = 'ticket-resale-bff-upstream-idempotency';

export function loadTransactionsConfig(env: NodeJS.ProcessEnv = process.env): TransactionsConfig {
  return validateEnvClass(TransactionsConfig, env);
}
