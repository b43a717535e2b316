// Sender factories: each returns a Source ({ preset, verifier })

// Shared types of the generic HMAC config
export type { DigestEncoding, HmacAlgorithm } from './crypto.js';
export { type DiscordConfig, discord } from './discord.js';
export { type EventGridConfig, eventGrid } from './event-grid.js';
export { type GithubConfig, github } from './github.js';
export { type GitlabConfig, gitlab } from './gitlab.js';
export { type HmacConfig, hmac } from './hmac.js';
export { type IntercomConfig, intercom } from './intercom.js';
export { type LinearConfig, linear } from './linear.js';
export { type MailgunConfig, mailgun } from './mailgun.js';
export { type MsgraphConfig, msgraph } from './msgraph.js';
export { type PaddleConfig, paddle } from './paddle.js';
export { type PaypalConfig, paypal } from './paypal.js';
// Presets as data
export { type PresetName, presets } from './presets.js';
export { type SendgridConfig, sendgrid } from './sendgrid.js';
export { type ShopifyConfig, shopify } from './shopify.js';
export { type SlackConfig, slack } from './slack.js';
export { type SquareConfig, square } from './square.js';
export { type StandardWebhooksConfig, standardWebhooks } from './standard-webhooks.js';
export { type StripeConfig, stripe } from './stripe.js';
export { type TwilioConfig, twilio } from './twilio.js';
export { type ZoomConfig, zoom } from './zoom.js';
