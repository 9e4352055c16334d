import { Injectable, Logger } from '@nestjs/common';
import { WebhooksConfig } from '../config/webhooks.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { WorkerLoop } from '../durable-work/worker-loop';
import { afterFailure } from './delivery.schedule';
import { envelopeOf, toJson } from './outbox.repository';
import { SecretBox } from './secret-box';
import { WebhookDeliveryRepository, type SendableDelivery } from './webhook-delivery.repository';
import { WebhookEndpointRepository } from './webhook-endpoint.repository';
import { webhookHeaders } from './webhook-signature';
import { WebhookSender, type SendOutcome } from './webhook.sender';
import { WebhooksMetrics, type TryOutcome } from './webhooks.metrics';

/**
 * Sends due deliveries on every replica (durable work: a claim per delivery on the block's queue with a fencing
 * token, so two replicas never send one delivery at once). One try = one signed POST; its record is fenced by the claim's
 * token. A replica killed between the send and the record leaves the lease to expire: the delivery is sent again
 * with the same `webhook-id` (at least once; receivers dedupe by id). Logs carry ids, never URLs, secrets or
 * payloads.
 */
@Injectable()
export class DeliveryWorker {
  private readonly logger = new Logger('Webhooks');
  private readonly loop: WorkerLoop<SendableDelivery>;

  constructor(
    private readonly repo: WebhookDeliveryRepository,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly sender: WebhookSender,
    private readonly box: SecretBox,
    private readonly metrics: WebhooksMetrics,
    private readonly config: WebhooksConfig,
    private readonly work: DurableWorkService,
  ) {
    this.loop = work.loop({
      name: 'webhook_deliveries',
      enabled: config.WEBHOOKS_WORKER_ENABLED,
      intervalMs: config.WEBHOOKS_WORKER_INTERVAL_MS,
      concurrency: config.WEBHOOKS_WORKER_CONCURRENCY,
      // A pass as soon as a send ends: a send to a fast receiver takes milliseconds, so one room-full per interval
      // left the worker idle most of the time (docs/BENCHMARKS.md, "Webhook delivery"). Safe for the fair caps
      // because the queue's claims are serialised (QueueSpec.serialClaims): a ping's claim and a pass's, or two
      // replicas' passes, never count the caps' room at once.
      refill: true,
      claim: (room) => repo.claimDue(room, config.WEBHOOKS_LEASE_MS),
      work: (claim) => this.deliver(claim),
    });
    metrics.watchOldestUndelivered(() => repo.oldestUndelivered());
  }

  /** One pass of the loop (claims what is due and starts sending it). Exposed for tests. */
  tick(): Promise<number> {
    return this.loop.tick();
  }

  /**
   * Sends delivery `id` now on this replica (a ping, a manual retry), when nobody holds it. Not from the shutdown
   * drain on: the delivery is due, and a serving replica's pass sends it.
   */
  wake(id: string): void {
    this.loop.wake(() => this.repo.claimOne(id, this.config.WEBHOOKS_LEASE_MS));
  }

  /** One try of a claimed delivery (read with its claim), recorded under the claim. */
  async deliver(delivery: SendableDelivery): Promise<void> {
    const claim = delivery;
    const line = {
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      eventId: delivery.event.id,
      type: delivery.event.type,
      attempt: delivery.attempts,
    };
    if (!delivery.endpoint?.enabled) {
      const reason = delivery.endpoint ? 'endpoint disabled: not sent' : 'endpoint deleted: not sent';
      if (await this.repo.abandoned(claim, reason)) this.finished('abandoned', 0, line);
      else this.fencedOff(claim);
      return;
    }
    const secrets = this.secretsOf(delivery);
    if (secrets === null) {
      if (await this.repo.abandoned(claim, 'endpoint secret unreadable (key changed?): rotate the secret'))
        this.finished('abandoned', 0, line);
      return;
    }
    if (delivery.endpoint.rateLimited) {
      // rate_limit: one slot per send, reserved on the endpoint row (database clock, shared by every replica); a
      // delivery woken before the slot it holds (a manual retry) waits for it again without reserving another.
      const reserved =
        delivery.heldSlot === null
          ? await this.endpoints.reserveSendSlot(delivery.endpointId)
          : { slot: delivery.heldSlot, later: delivery.slotLater };
      if (reserved?.later) {
        if (!(await this.repo.postponed(claim, reserved.slot))) this.fencedOff(claim);
        return;
      }
    }
    const body = toJson(envelopeOf(delivery.event));
    const headers = webhookHeaders(secrets, delivery.event.id, body, Math.floor(Date.now() / 1000));
    const outcome = await this.sender.send(delivery.endpoint.url, headers, body);
    await this.record(claim, delivery, outcome, line);
  }

  private async record(
    claim: SendableDelivery,
    delivery: SendableDelivery,
    outcome: SendOutcome,
    line: Record<string, unknown>,
  ): Promise<void> {
    const status = outcome.kind === 'response' ? outcome.status : null;
    if (status !== null && status >= 200 && status < 300) {
      const ok = await this.repo.delivered(claim, {
        statusCode: status,
        error: null,
        durationMs: outcome.durationMs,
      });
      if (ok) this.finished('delivered', outcome.durationMs, { ...line, status });
      else this.fencedOff(claim);
      return;
    }
    const error =
      outcome.kind === 'response'
        ? `HTTP ${outcome.status}${outcome.status >= 300 && outcome.status < 400 ? ' (redirects are not followed)' : ''}${outcome.excerpt ? `: ${outcome.excerpt}` : ''}`
        : outcome.reason;
    // The tenant's delivery log gets the generic reason; what our network answered stays in the server log.
    if (outcome.kind !== 'response')
      this.logger.warn(
        {
          deliveryId: delivery.id,
          endpointId: delivery.endpointId,
          reason: outcome.reason,
          detail: outcome.detail,
        },
        'webhook send failed',
      );
    const after = afterFailure(delivery.attempts);
    const result = await this.repo.failed(
      claim,
      { statusCode: status, error, durationMs: outcome.durationMs },
      after,
      this.config.WEBHOOKS_DISABLE_AFTER_HOURS,
    );
    if (!result.recorded) {
      this.fencedOff(claim);
      return;
    }
    const kind: TryOutcome =
      outcome.kind === 'refused' ? 'refused' : after.kind === 'failed' ? 'failed' : 'retry';
    this.finished(kind, outcome.durationMs, {
      ...line,
      status,
      ...(after.kind === 'retry' ? { retryInMs: after.delayMs } : {}),
    });
    if (result.endpointDisabled)
      this.logger.warn(
        { endpointId: delivery.endpointId },
        'webhook endpoint disabled: failing for too long',
      );
  }

  private secretsOf(delivery: SendableDelivery): string[] | null {
    const endpoint = delivery.endpoint;
    if (!endpoint) return null;
    try {
      const current = this.box.open(endpoint.secret);
      return endpoint.previousSecret ? [current, this.box.open(endpoint.previousSecret)] : [current];
    } catch {
      return null;
    }
  }

  private finished(outcome: TryOutcome, durationMs: number, line: Record<string, unknown>): void {
    this.metrics.observe(outcome, durationMs);
    const fields = { ...line, outcome, durationMs };
    if (outcome === 'delivered' || outcome === 'retry') this.logger.log(fields, 'webhook try');
    else this.logger.warn(fields, 'webhook try');
  }

  private fencedOff(claim: { id: string; token: string }): void {
    this.work.fencedOff(
      { table: 'webhook_deliveries', id: claim.id, token: claim.token },
      'record of a webhook try',
    );
  }
}
