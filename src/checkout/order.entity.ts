import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { U64Column } from '../database/u64';
import { LeaseColumns } from '../durable-work/lease-columns';

/** What an order's attempt keys are derived from (`orders.attempt_keys`, checkout.context.ts transactionKey). */
export type AttemptKeys = 'client_key' | 'order_id';

/** What the customer sees. Final: confirmed, landed_with_error, rejected, failed. */
export const ORDER_STATES = [
  'created',
  'revalidated',
  'signing',
  'signed',
  'submitted',
  'confirmed',
  'landed_with_error',
  'expired',
  'rejected',
  'failed',
] as const;
export type OrderState = (typeof ORDER_STATES)[number];
export const FINAL_ORDER_STATES: readonly OrderState[] = [
  'confirmed',
  'landed_with_error',
  'rejected',
  'failed',
];

/** The next step a driver runs (resumes from after a crash); `done` = nothing left. */
export type RecoveryPoint = 'revalidate' | 'sign' | 'submit' | 'track' | 'lookup' | 'refresh' | 'done';

/** One finished attempt, kept when a new one starts. */
export interface PreviousAttempt {
  attempt: number;
  upstream_idempotency_key: string | null;
  custodial_transaction_id: string | null;
  transaction_signature: string | null;
  upstream_status: string | null;
}

/**
 * A checkout order (table `orders`, owned by checkout/). Its lease columns (`lease_owner`, `lease_until`,
 * `lease_token`) are durable work's, declared once in LeaseColumns.
 */
@Entity({ name: 'orders' })
export class OrderEntity extends LeaseColumns {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'client_id', type: 'uuid' })
  clientId: string;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  @Column({ type: 'text' })
  fingerprint: string;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId: string | null;

  @Column({ name: 'buyer_subject', type: 'text' })
  buyerSubject: string;

  @Column({ name: 'buyer_address', type: 'text' })
  buyerAddress: string;

  @U64Column({ name: 'event_id' })
  eventId: bigint;

  @U64Column({ name: 'ticket_id' })
  ticketId: bigint;

  @U64Column({ name: 'expected_price_minor' })
  expectedPriceMinor: bigint;

  @U64Column({ name: 'current_price_minor', nullable: true })
  currentPriceMinor: bigint | null;

  @Column({ name: 'stablecoin_decimals', type: 'integer', nullable: true })
  stablecoinDecimals: number | null;

  @Column({ type: 'text' })
  state: OrderState;

  @Column({ name: 'recovery_point', type: 'text' })
  recoveryPoint: RecoveryPoint;

  @Column({ type: 'integer' })
  attempt: number;

  /** The accept_offer_v2 batch of the current attempt, wire form (built from the live listing). */
  @Column({ type: 'jsonb', nullable: true })
  batch: Record<string, unknown> | null;

  @Column({ name: 'upstream_idempotency_key', type: 'text', nullable: true })
  upstreamIdempotencyKey: string | null;

  /** The transactions module's record id (SignOutcome.record.id) of the current attempt. */
  @Column({ name: 'transaction_record_id', type: 'uuid', nullable: true })
  transactionRecordId: string | null;

  @Column({ name: 'custodial_transaction_id', type: 'text', nullable: true })
  custodialTransactionId: string | null;

  @Column({ name: 'transaction_signature', type: 'text', nullable: true })
  transactionSignature: string | null;

  @Column({ name: 'upstream_status', type: 'text', nullable: true })
  upstreamStatus: string | null;

  @Column({ name: 'previous_attempts', type: 'jsonb' })
  previousAttempts: PreviousAttempt[];

  @Column({ name: 'failure_code', type: 'text', nullable: true })
  failureCode: string | null;

  @Column({ name: 'failure_reason', type: 'text', nullable: true })
  failureReason: string | null;

  @Column({ name: 'step_failures', type: 'integer' })
  stepFailures: number;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  /**
   * Not a column: when (performance.now(), this process) the statement that last took or renewed this drive's
   * lease was sent, so no earlier than the database stamped `lease_until` from. 0 on a plain read. A drive sends a
   * signing request alongside its fenced ledger insert only while less than half a lease has passed since.
   */
  heldSince = 0;

  /**
   * What the attempt keys are derived from (checkout.context.ts transactionKey): the client's Idempotency-Key for
   * orders made by this version (a lost row's retry reaches the same upstream transaction), the row id before.
   */
  @Column({ name: 'attempt_keys', type: 'text', insert: false })
  attemptKeys: AttemptKeys;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false })
  createdAt: Date;

  @Column({ name: 'attempt_started_at', type: 'timestamptz', insert: false })
  attemptStartedAt: Date;

  @Column({ name: 'final_at', type: 'timestamptz', nullable: true })
  finalAt: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz', insert: false })
  updatedAt: Date;
}

/** One audit row (table `order_steps`). */
export interface OrderStep {
  at: Date;
  attempt: number;
  step: string;
  state: OrderState;
  recoveryPoint: RecoveryPoint;
  detail: string | null;
  actor: string;
  requestId: string | null;
}
