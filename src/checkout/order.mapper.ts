import { formatMinor } from '../common/money';
import { FINAL_ORDER_STATES, type OrderEntity, type OrderState, type OrderStep } from './order.entity';

/** What each state means to the customer (shown as `meaning`). */
export const STATE_MEANING: Record<OrderState, string> = {
  created: 'Order received: checking that the listing is still available at your price.',
  revalidated: 'The listing is available at your price: preparing the payment.',
  signing: 'Authorising the payment from your wallet.',
  signed: 'Payment authorised: sending it to the ledger.',
  submitted: 'Payment sent: waiting for the ledger to confirm it. Not complete yet.',
  confirmed: 'Purchase complete: the ticket is yours and the seller has been paid.',
  landed_with_error: 'The ledger refused the purchase: nothing was charged.',
  expired: 'The payment did not reach the ledger in time and was not charged: trying again.',
  rejected: 'The listing is no longer available at that price: nothing was charged.',
  failed: 'The purchase could not be completed: nothing was charged.',
};

export interface MoneyView {
  minor: string;
  /** Exact decimal text in token units (null while the token's decimals are unknown). */
  formatted: string | null;
  decimals: number | null;
}

export interface OrderResponse {
  id: string;
  idempotency_key: string;
  state: OrderState;
  final: boolean;
  meaning: string;
  attempt: number;
  buyer: { subject: string; address: string };
  event_id: string;
  ticket_id: string;
  expected_price: MoneyView;
  current_price: MoneyView | null;
  failure: { code: string; reason: string } | null;
  transaction: {
    custodial_transaction_id: string | null;
    transaction_signature: string | null;
    upstream_status: string | null;
  } | null;
  previous_attempts: OrderEntity['previousAttempts'];
  created_at: string;
  updated_at: string;
  final_at: string | null;
  steps?: { at: string; attempt: number; step: string; state: OrderState; detail: string | null }[];
}

export function money(minor: bigint, decimals: number | null): MoneyView {
  return {
    minor: minor.toString(),
    formatted: decimals === null ? null : formatMinor(minor, decimals),
    decimals,
  };
}

export function isFinalState(state: OrderState): boolean {
  return FINAL_ORDER_STATES.includes(state);
}

/** The public view of an order; `fallbackDecimals` formats money before the order learnt its token's decimals. */
export function toOrderResponse(
  order: OrderEntity,
  fallbackDecimals: number | null,
  steps?: OrderStep[],
): OrderResponse {
  const decimals = order.stablecoinDecimals ?? fallbackDecimals;
  const response: OrderResponse = {
    id: order.id,
    idempotency_key: order.idempotencyKey,
    state: order.state,
    final: isFinalState(order.state),
    meaning: STATE_MEANING[order.state],
    attempt: order.attempt,
    buyer: { subject: order.buyerSubject, address: order.buyerAddress },
    event_id: order.eventId.toString(),
    ticket_id: order.ticketId.toString(),
    expected_price: money(order.expectedPriceMinor, decimals),
    current_price: order.currentPriceMinor === null ? null : money(order.currentPriceMinor, decimals),
    failure:
      order.failureCode === null ? null : { code: order.failureCode, reason: order.failureReason ?? '' },
    transaction:
      order.custodialTransactionId === null
        ? null
        : {
            custodial_transaction_id: order.custodialTransactionId,
            transaction_signature: order.transactionSignature,
            upstream_status: order.upstreamStatus,
          },
    previous_attempts: order.previousAttempts,
    created_at: order.createdAt.toISOString(),
    updated_at: order.updatedAt.toISOString(),
    final_at: order.finalAt?.toISOString() ?? null,
  };
  if (steps)
    response.steps = steps.map((s) => ({
      at: s.at.toISOString(),
      attempt: s.attempt,
      step: s.step,
      state: s.state,
      detail: s.detail,
    }));
  return response;
}
