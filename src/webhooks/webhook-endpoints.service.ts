import { Injectable } from '@nestjs/common';
import type { ClientContext } from '../auth/client-context';
import type { Page } from '../common/dto/page.dto';
import { KeysetCursorCodec } from '../common/keyset-cursor';
import { keysetPage } from '../common/keyset-page';
import { WebhooksConfig } from '../config/webhooks.config';
import { AddressPolicy } from './address.policy';
import { dateTimeExists } from './date-time';
import { DeliveryWorker } from './delivery.worker';
import { endpointUrlProblems } from './endpoint-url';
import { OutboxRepository } from './outbox.repository';
import { SecretBox } from './secret-box';
import { WebhookDeliveryLogRepository, type DeliveryStatus } from './webhook-delivery-log.repository';
import {
  toDeliveryView,
  toEndpointView,
  type DeliveryView,
  type EndpointView,
} from './webhook-endpoint.mapper';
import { WebhookEndpointRepository, isUuid, type EndpointPatch } from './webhook-endpoint.repository';
import { OPERATOR_EVENT_TYPES } from './webhook-events';
import { newSigningSecret } from './webhook-signature';
import { WebhooksErrors } from './webhooks.errors';

/** Deliveries one recover re-queues at most (one bounded statement); call again for the rest. */
export const RECOVER_MAX_DELIVERIES = 10_000;

export interface EndpointInput {
  url: string;
  description?: string | null;
  event_types?: string[];
  /** u64 decimal strings (validated by the DTO): catalog events of these events only. */
  event_ids?: string[];
  enabled?: boolean;
  rate_limit?: number | null;
}

/** Event ids without repeats, as canonical decimal strings (the DTO checked each is a u64). */
function uniqueIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/**
 * The endpoints API (`/v1/webhooks/endpoints`): each client sees and changes only its own endpoints. A revoked key's
 * endpoints are disabled at its revocation by RevokedKeyEndpoints (nothing more reaches them).
 */
@Injectable()
export class WebhookEndpointsService {
  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly deliveryRepo: WebhookDeliveryLogRepository,
    private readonly outbox: OutboxRepository,
    private readonly worker: DeliveryWorker,
    private readonly box: SecretBox,
    private readonly policy: AddressPolicy,
    private readonly cursors: KeysetCursorCodec,
    private readonly config: WebhooksConfig,
  ) {}

  /** A new endpoint and its secret (`whsec_…`, shown in this answer only). */
  async create(client: ClientContext, input: EndpointInput): Promise<EndpointView & { secret: string }> {
    this.checkUrl(input.url);
    const operator = client.scopes.includes('admin');
    const eventTypes = this.checkTypes(input.event_types ?? [], operator);
    const secret = newSigningSecret();
    const row = await this.endpoints.create(
      {
        clientId: client.id,
        url: input.url,
        description: input.description ?? null,
        eventTypes,
        eventIds: uniqueIds(input.event_ids ?? []),
        operatorEvents: operator,
        enabled: input.enabled ?? true,
        rateLimit: input.rate_limit ?? null,
        secret: this.box.seal(secret),
      },
      this.config.WEBHOOKS_MAX_ENDPOINTS_PER_CLIENT,
    );
    if (!row) throw WebhooksErrors.tooManyEndpoints(this.config.WEBHOOKS_MAX_ENDPOINTS_PER_CLIENT);
    return { ...toEndpointView(row), secret };
  }

  async list(client: ClientContext, limit: number, cursor: string | undefined): Promise<Page<EndpointView>> {
    const binding = { sort: 'created_desc', filters: { client: client.id } };
    const after = cursor === undefined ? null : this.position(cursor, binding);
    const rows = await this.endpoints.page(client.id, limit, after);
    const page = keysetPage(rows, limit, (r) => [r.created_key, r.id], this.cursors, binding);
    return { items: page.items.map(toEndpointView), next_cursor: page.next_cursor };
  }

  async get(client: ClientContext, id: string): Promise<EndpointView> {
    const row = await this.endpoints.get(client.id, id);
    if (!row) throw WebhooksErrors.endpointNotFound();
    return toEndpointView(row);
  }

  async update(client: ClientContext, id: string, input: Partial<EndpointInput>): Promise<EndpointView> {
    if (input.url !== undefined) this.checkUrl(input.url);
    const patch: EndpointPatch = {
      url: input.url,
      description: input.description,
      eventTypes:
        input.event_types === undefined
          ? undefined
          : this.checkTypes(input.event_types, client.scopes.includes('admin')),
      eventIds: input.event_ids === undefined ? undefined : uniqueIds(input.event_ids),
      enabled: input.enabled,
      rateLimit: input.rate_limit,
    };
    const row = await this.endpoints.update(client.id, id, patch);
    if (!row) throw WebhooksErrors.endpointNotFound();
    return toEndpointView(row);
  }

  async delete(client: ClientContext, id: string): Promise<void> {
    if (!(await this.endpoints.delete(client.id, id))) throw WebhooksErrors.endpointNotFound();
  }

  /** A new secret (shown once); the current one keeps signing alongside it for WEBHOOKS_SECRET_GRACE_MS. */
  async rotateSecret(client: ClientContext, id: string): Promise<EndpointView & { secret: string }> {
    const secret = newSigningSecret();
    const row = await this.endpoints.rotate(
      client.id,
      id,
      this.box.seal(secret),
      this.config.WEBHOOKS_SECRET_GRACE_MS,
    );
    if (!row) throw WebhooksErrors.endpointNotFound();
    return { ...toEndpointView(row), secret };
  }

  /**
   * A `webhook.ping` event delivered to this endpoint only, sent at once on this replica when the worker has room
   * (else by the next pass); rate-limited per endpoint.
   */
  async ping(client: ClientContext, id: string): Promise<{ event_id: string; delivery_id: string }> {
    const endpoint = await this.endpoints.get(client.id, id);
    if (!endpoint) throw WebhooksErrors.endpointNotFound();
    if (!endpoint.enabled) throw WebhooksErrors.endpointDisabled();
    await this.manualSend(client, endpoint.id);
    const { eventId, deliveryId } = await this.outbox.ping(client.id, endpoint.id);
    this.worker.wake(deliveryId);
    return { event_id: eventId, delivery_id: deliveryId };
  }

  async deliveries(
    client: ClientContext,
    endpointId: string,
    limit: number,
    cursor: string | undefined,
    status: DeliveryStatus | undefined,
  ): Promise<Page<DeliveryView>> {
    const endpoint = await this.endpoints.get(client.id, endpointId);
    if (!endpoint) throw WebhooksErrors.endpointNotFound();
    const binding = { sort: 'created_desc', filters: { endpoint: endpoint.id, status } };
    const after = cursor === undefined ? null : this.position(cursor, binding);
    const rows = await this.deliveryRepo.page(endpoint.id, limit, after, status);
    const page = keysetPage(rows, limit, (r) => [r.created_key, r.id], this.cursors, binding);
    return { items: page.items.map(toDeliveryView), next_cursor: page.next_cursor };
  }

  /** Sends the delivery again now (same webhook-id), whatever its status; 409 while it is being sent. */
  async retry(client: ClientContext, endpointId: string, deliveryId: string): Promise<DeliveryView> {
    const endpoint = await this.endpoints.get(client.id, endpointId);
    if (!endpoint) throw WebhooksErrors.endpointNotFound();
    if (!isUuid(deliveryId) || !(await this.deliveryRepo.one(endpoint.id, deliveryId)))
      throw WebhooksErrors.deliveryNotFound();
    if (!endpoint.enabled) throw WebhooksErrors.endpointDisabled();
    await this.manualSend(client, endpoint.id);
    const row = await this.deliveryRepo.retry(endpoint.id, deliveryId);
    if (row === null) throw WebhooksErrors.deliveryNotFound();
    if (row === 'busy') throw WebhooksErrors.deliveryBusy();
    this.worker.wake(row.id);
    return toDeliveryView(row);
  }

  /**
   * Recover (as Svix's): every failed (given-up) delivery of this endpoint created since `since` is due again now,
   * up to RECOVER_MAX_DELIVERIES, in one statement. The endpoint must be enabled (409 otherwise: enabling is a
   * separate PATCH, as in Svix); `since` may be neither in the future nor older than the outbox keeps (400). One
   * recover counts as one manual send of the endpoint (429 past WEBHOOKS_MANUAL_SENDS_PER_MINUTE).
   */
  async recover(client: ClientContext, endpointId: string, sinceText: string): Promise<{ requeued: number }> {
    if (!dateTimeExists(sinceText)) throw WebhooksErrors.badSince('since must be an RFC 3339 date-time');
    const since = sinceText.toUpperCase();
    const endpoint = await this.endpoints.get(client.id, endpointId);
    if (!endpoint) throw WebhooksErrors.endpointNotFound();
    if (!endpoint.enabled) throw WebhooksErrors.endpointDisabled();
    const retentionDays = this.config.WEBHOOKS_RETENTION_DAYS;
    const bounds = await this.deliveryRepo.sinceBounds(since, retentionDays);
    if (bounds.future) throw WebhooksErrors.badSince('since must not be in the future');
    if (bounds.pruned)
      throw WebhooksErrors.badSince(
        `since must be within the outbox's retention (WEBHOOKS_RETENTION_DAYS, ${retentionDays} days)`,
      );
    await this.manualSend(client, endpoint.id);
    const requeued = await this.deliveryRepo.recover(endpoint.id, since, RECOVER_MAX_DELIVERIES);
    return { requeued };
  }

  /** Pings and manual retries are rate-limited per endpoint (429 with Retry-After past the minute's share). */
  private async manualSend(client: ClientContext, endpointId: string): Promise<void> {
    const perMinute = this.config.WEBHOOKS_MANUAL_SENDS_PER_MINUTE;
    const taken = await this.endpoints.takeManualSend(client.id, endpointId, perMinute);
    if (!taken) throw WebhooksErrors.endpointNotFound();
    if (!taken.allowed) throw WebhooksErrors.manualSendsLimited(perMinute, taken.retryAfterSeconds);
  }

  private checkUrl(url: string): void {
    const problems = endpointUrlProblems(url, this.policy);
    if (problems.length > 0) throw WebhooksErrors.badUrl(problems);
  }

  private checkTypes(types: string[], operator: boolean): string[] {
    const refused = operator
      ? []
      : types.filter((t) => (OPERATOR_EVENT_TYPES as readonly string[]).includes(t));
    if (refused.length > 0) throw WebhooksErrors.operatorTypes(refused);
    return [...new Set(types)];
  }

  private position(
    cursor: string,
    binding: { sort: string; filters: Record<string, string | undefined> },
  ): [string, string] {
    const [created, id] = this.cursors.decode(cursor, binding);
    if (typeof created !== 'string' || typeof id !== 'string' || !isUuid(id))
      throw WebhooksErrors.badCursor('cursor');
    return [created, id];
  }
}
