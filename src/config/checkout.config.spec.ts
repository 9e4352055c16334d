import { describe, expect, it } from 'vitest';
import { CheckoutConfig, loadCheckoutConfig } from './checkout.config';

describe(CheckoutConfig.name, () => {
  it('defaults; crash points honoured only under NODE_ENV=test', () => {
    expect(loadCheckoutConfig({})).toMatchObject({ CHECKOUT_MAX_ATTEMPTS: 3, crashPointsAllowed: false });
    expect(loadCheckoutConfig({ NODE_ENV: 'test', CHECKOUT_CRASH_POINTS: 'before_sign@2' })).toMatchObject({
      CHECKOUT_CRASH_POINTS: 'before_sign@2',
      crashPointsAllowed: true,
    });
  });

  it('refuses crash points in production and names bad values', () => {
    expect(() =>
      loadCheckoutConfig({ NODE_ENV: 'production', CHECKOUT_CRASH_POINTS: 'before_sign' }),
    ).toThrow(/CHECKOUT_CRASH_POINTS/);
    expect(() => loadCheckoutConfig({ CHECKOUT_MAX_ATTEMPTS: '0', CHECKOUT_CRASH_POINTS: 'x y' })).toThrow(
      /CHECKOUT_MAX_ATTEMPTS[\s\S]*CHECKOUT_CRASH_POINTS|CHECKOUT_CRASH_POINTS[\s\S]*CHECKOUT_MAX_ATTEMPTS/,
    );
  });
});
