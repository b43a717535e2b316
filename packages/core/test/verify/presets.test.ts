import { describe, expect, it } from 'vitest';
import {
  github,
  hmac,
  msgraph,
  presets,
  shopify,
  slack,
  standardWebhooks,
  stripe,
} from '../../src/verify/index.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('presets', () => {
  it('describes every built-in sender, frozen', () => {
    expect(Object.keys(presets).sort()).toEqual(
      [
        'github',
        'hmac',
        'msgraph',
        'paddle',
        'shopify',
        'slack',
        'standard-webhooks',
        'stripe',
        'twilio',
        'zoom',
        'discord',
        'gitlab',
        'linear',
        'event-grid',
        'square',
        'sendgrid',
        'mailgun',
        'intercom',
        'paypal',
      ].sort(),
    );
    for (const [name, preset] of Object.entries(presets)) {
      expect(preset.name).toBe(name);
      expect(preset.scheme).not.toMatch(/\n/);
      expect(preset.retryPolicy).not.toMatch(/\n/);
      expect(preset.retryHorizonMs).toBeGreaterThan(0);
      expect(Object.isFrozen(preset)).toBe(true);
    }
    expect(Object.isFrozen(presets)).toBe(true);
  });

  it('states the retry horizons and tolerances the senders document', () => {
    const horizon = Object.fromEntries(
      Object.entries(presets).map(([n, p]) => [n, p.retryHorizonMs]),
    );
    expect(horizon).toEqual({
      stripe: 3 * DAY,
      github: 3 * DAY,
      slack: HOUR,
      shopify: 4 * HOUR,
      'standard-webhooks': 3 * DAY,
      msgraph: 4 * HOUR,
      hmac: 3 * DAY,
      twilio: HOUR,
      paddle: 3 * DAY,
      zoom: 3 * HOUR,
      discord: HOUR,
      gitlab: 2 * DAY,
      linear: 8 * HOUR,
      'event-grid': DAY,
      square: DAY,
      sendgrid: DAY,
      mailgun: 8 * HOUR,
      intercom: HOUR,
      paypal: 3 * DAY,
    });
    expect(presets.stripe.toleranceSec).toBe(300);
    expect(presets.github.toleranceSec).toBeNull();
    expect(presets.msgraph.handshake).toMatch(/validationToken/);
    expect(presets.slack.handshake).toMatch(/url_verification/);
  });

  it('is what each factory returns, with its configured tolerance', () => {
    const whsec = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
    expect(stripe({ secrets: ['s'], toleranceSec: 60 }).preset).toEqual({
      ...presets.stripe,
      toleranceSec: 60,
    });
    expect(slack({ secrets: ['s'] }).preset).toEqual(presets.slack);
    expect(standardWebhooks({ secrets: [whsec] }).preset).toEqual(presets['standard-webhooks']);
    expect(github({ secrets: ['s'] }).preset).toBe(presets.github);
    expect(shopify({ secrets: ['s'] }).preset).toBe(presets.shopify);
    expect(msgraph({ clientStates: ['s'] }).preset).toBe(presets.msgraph);
    expect(
      hmac({ secrets: ['s'], header: 'x', eventIdField: 'id', retryHorizonMs: HOUR }).preset
        .retryHorizonMs,
    ).toBe(HOUR);
  });
});
