import type { EventInput, OwnerRef, SeedListingInput } from '../admin.types';
import { parseI64, parseU64 } from '../chain/u64.codec';
import { isAddress } from '../chain/wallet.keys';

/** A bad admin request body; admin routes map it to 400. */
export class AdminInputError extends Error {
  override readonly name = 'AdminInputError';
}

/** Admin bodies are optional objects; a missing body reads as `{}`. */
export function readAdminBody(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AdminInputError('body must be an object');
  return body as Record<string, unknown>;
}

function u64(value: unknown, name: string): bigint {
  const parsed = parseU64(value);
  if (!parsed.ok) throw new AdminInputError(`${name} ${parsed.reason}`);
  return parsed.value;
}

function address(value: unknown, name: string): string {
  if (!isAddress(value)) throw new AdminInputError(`${name} must be a base58 address`);
  return value;
}

/** `{ "kind": "user"|"integrator", "subject": "…" }` or `{ "address": "…" }`. */
export function readOwner(value: unknown): OwnerRef {
  const body = readAdminBody(value ?? null);
  if (body.address !== undefined) return { address: address(body.address, 'owner.address') };
  if (
    (body.kind === 'user' || body.kind === 'integrator') &&
    typeof body.subject === 'string' &&
    body.subject !== ''
  ) {
    return { kind: body.kind, subject: body.subject };
  }
  throw new AdminInputError('owner must be {kind: "user"|"integrator", subject} or {address}');
}

export function readEventInput(body: Record<string, unknown>): EventInput {
  const input: EventInput = {};
  if (body.event_id !== undefined) input.eventId = u64(body.event_id, 'event_id');
  if (body.name !== undefined) {
    if (typeof body.name !== 'string' || body.name === '')
      throw new AdminInputError('name must be a non-empty string');
    input.name = body.name;
  }
  if (body.venue !== undefined) {
    if (typeof body.venue !== 'string') throw new AdminInputError('venue must be a string');
    input.venue = body.venue;
  }
  if (body.start_at !== undefined) {
    const ms = typeof body.start_at === 'string' ? Date.parse(body.start_at) : NaN;
    if (Number.isNaN(ms)) throw new AdminInputError('start_at must be an ISO 8601 date-time');
    input.startAtMs = ms;
  }
  if (body.royalty_destinations !== undefined) {
    if (!Array.isArray(body.royalty_destinations))
      throw new AdminInputError('royalty_destinations must be an array');
    input.royaltyDestinations = body.royalty_destinations.map((a: unknown) =>
      address(a, 'royalty_destinations[]'),
    );
  }
  if (body.ticket_type_config !== undefined) {
    input.ticketTypeConfig =
      body.ticket_type_config === null ? null : address(body.ticket_type_config, 'ticket_type_config');
  }
  return input;
}

export function readSeedListing(body: Record<string, unknown>): SeedListingInput {
  const input: SeedListingInput = {
    eventId: u64(body.event_id, 'event_id'),
    seller: readOwner(body.seller),
    askPriceMinor: u64(body.ask_price_minor, 'ask_price_minor'),
  };
  if (body.ticket_id !== undefined) input.ticketId = u64(body.ticket_id, 'ticket_id');
  if (body.expires_at !== undefined) {
    const parsed = parseI64(body.expires_at);
    if (!parsed.ok) throw new AdminInputError(`expires_at ${parsed.reason}`);
    input.expiresAt = parsed.value;
  }
  if (body.buyer_allow !== undefined && body.buyer_allow !== null)
    input.buyerAllow = address(body.buyer_allow, 'buyer_allow');
  return input;
}
