import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSigningSecret, signatureHeader, webhookHeaders } from './webhook-signature';

const body = JSON.stringify({
  id: 'evt_1',
  type: 'order.confirmed',
  data: { order_id: 'o-1', price_minor: '1500' },
});
const now = () => Math.floor(Date.now() / 1000);

describe(webhookHeaders.name, () => {
  it('verifies with the standardwebhooks package, as a receiver does', () => {
    const secret = newSigningSecret();
    const sut = webhookHeaders([secret], 'evt_1', body, now());

    expect(new Webhook(secret).verify(body, sut)).toEqual(JSON.parse(body));
    expect(sut['content-type']).toBe('application/json');
    expect(sut['webhook-id']).toBe('evt_1');
  });

  it('fails verification for a tampered body, another id or another secret', () => {
    const secret = newSigningSecret();
    const sut = webhookHeaders([secret], 'evt_1', body, now());

    expect(() => new Webhook(secret).verify(body.replace('1500', '1'), sut)).toThrow(
      WebhookVerificationError,
    );
    expect(() => new Webhook(secret).verify(body, { ...sut, 'webhook-id': 'evt_2' })).toThrow(
      WebhookVerificationError,
    );
    expect(() => new Webhook(newSigningSecret()).verify(body, sut)).toThrow(WebhookVerificationError);
  });

  it('fails verification for a timestamp older than the tolerance (a replayed message)', () => {
    const secret = newSigningSecret();
    const sut = webhookHeaders([secret], 'evt_1', body, now() - 6 * 60);

    expect(() => new Webhook(secret).verify(body, sut)).toThrow(/too old/);
  });

  it('signs with every secret given, so either side of a rotation verifies', () => {
    const [next, previous] = [newSigningSecret(), newSigningSecret()];
    const sut = webhookHeaders([next, previous], 'evt_1', body, now());

    expect(sut['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(next).verify(body, sut)).toBeTruthy();
    expect(new Webhook(previous).verify(body, sut)).toBeTruthy();
  });
});

describe(signatureHeader.name, () => {
  it('is v1, and the base64 HMAC-SHA256 of id.timestamp.body under the decoded secret', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const sut = signatureHeader([secret], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');

    // The Standard Webhooks specification's own example.
    expect(sut).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe(newSigningSecret.name, () => {
  it('is whsec_ and 32 random bytes in base64, never the same twice', () => {
    const sut = newSigningSecret();

    expect(sut).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(sut.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(sut);
  });
});
