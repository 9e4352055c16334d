import { context, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { isWebhookSend, serviceSampler } from './tracing.sdk';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

/** A context whose parent is a caller's span (remote) or one of this process (local), sampled or not. */
function parent(remote: boolean, sampled: boolean) {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: TRACE_ID,
    spanId: 'b7ad6b7169203331',
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: remote,
  });
}

function decide(ratio: number, ctx = context.active()): SamplingDecision {
  return serviceSampler(ratio).shouldSample(ctx, TRACE_ID, 'GET /v1/me', SpanKind.SERVER, {}, []).decision;
}

describe(serviceSampler.name, () => {
  it("a caller's sampled flag does not decide: not sampled upstream, kept here (ratio 1)", () => {
    expect(decide(1, parent(true, false))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });

  it("a caller's sampled flag does not force a trace in: sampled upstream, dropped here (ratio 0)", () => {
    expect(decide(0, parent(true, true))).toBe(SamplingDecision.NOT_RECORD);
  });

  it('a new trace follows the ratio; a local parent is followed', () => {
    expect(decide(1, ROOT_CONTEXT)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(0, ROOT_CONTEXT)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide(0, parent(false, true))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
  });
});

describe(isWebhookSend.name, () => {
  it('a request with a webhook-id header (any case) is a webhook send; others are not', () => {
    expect(isWebhookSend({ headers: { 'webhook-id': 'evt_1' } })).toBe(true);
    expect(isWebhookSend({ headers: { 'Webhook-Id': 'evt_1' } })).toBe(true);
    expect(isWebhookSend({ headers: { 'x-api-key': 'k' } })).toBe(false);
    expect(isWebhookSend({})).toBe(false);
  });
});
