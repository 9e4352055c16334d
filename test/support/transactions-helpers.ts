import request from 'supertest';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import { bearer } from './auth-helpers';
import { waitUntil } from './wait';

type Server = Parameters<typeof request>[0];

/** A fresh event and a ticket owned by a user subject, listed or not (straight on the sandbox ledger). */
export function seedTicket(
  sandbox: SandboxHandle,
  subject: string,
  listed: boolean,
): { eventId: bigint; ticketId: bigint } {
  const { eventId } = sandbox.admin.createEvent();
  if (listed) {
    const listing = sandbox.admin.seedListing({
      eventId,
      seller: { kind: 'user', subject },
      askPriceMinor: 1_000_000n,
    });
    return { eventId, ticketId: BigInt(listing.ticket_id) };
  }
  const ticket = sandbox.admin.mintTicket({ eventId, owner: { kind: 'user', subject } });
  return { eventId, ticketId: BigInt(ticket.ticket_id) };
}

export function cancelBody(
  sandbox: SandboxHandle,
  subject: string,
  ticket: { eventId: bigint; ticketId: bigint },
): Record<string, unknown> {
  return {
    platformInstructions: {
      instruction: 'cancel_listing_v1',
      params: [
        {
          event_id: ticket.eventId.toString(),
          ticket_id: ticket.ticketId.toString(),
          canceller: sandbox.admin.userWalletAddress(subject),
        },
      ],
    },
  };
}

export function signUser(
  server: Server,
  key: string,
  subject: string,
  idempotencyKey: string | undefined,
  body: unknown,
): request.Test {
  const req = request(server)
    .post(`/v1/wallets/users/${encodeURIComponent(subject)}/signatures`)
    .set(bearer(key));
  if (idempotencyKey !== undefined) void req.set('idempotency-key', idempotencyKey);
  return req.send(body as object);
}

export interface TxBody {
  custodialTransactionId: string;
  status: string | null;
  final: boolean;
  phase: string;
  failureReason: string | null;
  lastError: string | null;
  trackingStopped: string | null;
  signedTransaction: string;
  history?: {
    type: string;
    status: string | null;
    detail: string | null;
    actor: string;
    at: string;
    startedAt: string | null;
  }[];
}

export async function getTx(server: Server, key: string, id: string): Promise<TxBody> {
  const res = await request(server).get(`/v1/transactions/${id}`).set(bearer(key)).expect(200);
  return res.body as TxBody;
}

/** Polls GET until `done` holds (bounded), returning the last body. */
export async function waitForTx(
  server: Server,
  key: string,
  id: string,
  done: (tx: TxBody) => boolean,
  timeoutMs = 15_000,
): Promise<TxBody> {
  let last: TxBody | undefined;
  await waitUntil(async () => {
    last = await getTx(server, key, id);
    return done(last);
  }, timeoutMs);
  return last as TxBody;
}
