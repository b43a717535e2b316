import type { SenderPreset } from '../contracts/source.js';
import { discordPreset } from './discord.js';
import { eventGridPreset } from './event-grid.js';
import { githubPreset } from './github.js';
import { gitlabPreset } from './gitlab.js';
import { hmacPreset } from './hmac.js';
import { intercomPreset } from './intercom.js';
import { linearPreset } from './linear.js';
import { mailgunPreset } from './mailgun.js';
import { msgraphPreset } from './msgraph.js';
import { paddlePreset } from './paddle.js';
import { paypalPreset } from './paypal.js';
import { sendgridPreset } from './sendgrid.js';
import { shopifyPreset } from './shopify.js';
import { slackPreset } from './slack.js';
import { squarePreset } from './square.js';
import { standardWebhooksPreset } from './standard-webhooks.js';
import { stripePreset } from './stripe.js';
import { twilioPreset } from './twilio.js';
import { zoomPreset } from './zoom.js';

export type PresetName =
  | 'stripe'
  | 'github'
  | 'slack'
  | 'shopify'
  | 'standard-webhooks'
  | 'msgraph'
  | 'hmac'
  | 'twilio'
  | 'paddle'
  | 'zoom'
  | 'discord'
  | 'gitlab'
  | 'linear'
  | 'event-grid'
  | 'square'
  | 'sendgrid'
  | 'mailgun'
  | 'intercom'
  | 'paypal';

/**
 * What onceflow knows about each built-in sender, as data (frozen): scheme, tolerance, where the
 * event id lives, handshake and retry horizon. A configured source's preset equals this one except
 * for the settings its factory took (tolerance; for `hmac`, everything it was told).
 *
 * @example
 * presets.stripe.retryHorizonMs; // 259_200_000 (3 days): keep inbox ids longer than that
 */
export const presets: Readonly<Record<PresetName, SenderPreset>> = Object.freeze({
  stripe: stripePreset,
  github: githubPreset,
  slack: slackPreset,
  shopify: shopifyPreset,
  'standard-webhooks': standardWebhooksPreset,
  msgraph: msgraphPreset,
  hmac: hmacPreset,
  twilio: twilioPreset,
  paddle: paddlePreset,
  zoom: zoomPreset,
  discord: discordPreset,
  gitlab: gitlabPreset,
  linear: linearPreset,
  'event-grid': eventGridPreset,
  square: squarePreset,
  sendgrid: sendgridPreset,
  mailgun: mailgunPreset,
  intercom: intercomPreset,
  paypal: paypalPreset,
});
