/**
 * `@onceflow/core`: what application code imports. Adapter authors add `@onceflow/core/kit`;
 * tests add `@onceflow/core/testing` (memory stores).
 */

// Envelope
export { type Envelope, type EnvelopeInit, createEnvelope, payloadJson } from './envelope.js';

// Errors: recognised by `code` (isOnceflowError), so two installed copies of core agree
export {
  type ErrorByCode,
  type ErrorCode,
  type ErrorInfo,
  AlreadyProcessedError,
  BadRequestError,
  ConfigError,
  LockLostError,
  NonRetryableError,
  OnceflowError,
  PayloadTooLargeError,
  RetryLaterError,
  ReviewError,
  SchemaError,
  SecretsLookupError,
  SignatureError,
  StoreUnavailableError,
  TransportUnavailableError,
  UsageError,
  WireFormatError,
  errorInfo,
  isOnceflowError,
  toOnceflowError,
} from './errors.js';

// Contracts (types only): what adapters and stores implement
export type {
  BacklogProbe,
  BacklogReading,
  BrokerDeadLetters,
  ConsumeOptions,
  Delivery,
  OutgoingMessage,
  PartitionLag,
  RenewableDelivery,
  Subscription,
  TopologySetup,
  Transport,
  TransportCapabilities,
} from './contracts/transport.js';
export type {
  ClaimResult,
  Inbox,
  InboxOutcomes,
  InboxStats,
  StaleClaim,
  StoreIdentity,
} from './contracts/inbox.js';
export { INBOX_HEADER, hasInboxOutcomes, storeIdOf } from './contracts/inbox.js';
export type {
  BeginOptions,
  BeginResult,
  CompleteOptions,
  DeadLetterFields,
  EventRecord,
  EventState,
  HistoryEntry,
  RecordAction,
  RecordFilter,
  RecordPage,
  RecordQuery,
  RecordStore,
} from './contracts/records.js';
export {
  EVENT_STATES,
  HISTORY_LIMIT,
  NOTE_LIMIT,
  RECORD_PAGE_LIMIT,
  isEventState,
} from './contracts/records.js';

// Stale events and transitions: the position a store's applyIfNewer compares, allowed moves
export type { AppliedPosition } from './stale/position.js';
export {
  type StateOf,
  type TransitionMap,
  type Transitions,
  defineTransitions,
} from './stale/transitions.js';
export type {
  HandshakeResponse,
  IncomingWebhook,
  VerifiedEvent,
  Verifier,
} from './contracts/verifier.js';
export type { SenderPreset, Source, TenantRequest } from './contracts/source.js';
export { type HealthCheck, hasHealthCheck } from './contracts/health-check.js';

// Senders: each factory returns a Source ({ preset, verifier })
export {
  type DigestEncoding,
  type GithubConfig,
  type HmacAlgorithm,
  type HmacConfig,
  type DiscordConfig,
  type EventGridConfig,
  type GitlabConfig,
  type IntercomConfig,
  type LinearConfig,
  type MailgunConfig,
  type MsgraphConfig,
  type PaddleConfig,
  type PaypalConfig,
  type PresetName,
  type SendgridConfig,
  type ShopifyConfig,
  type SlackConfig,
  type SquareConfig,
  type StandardWebhooksConfig,
  type StripeConfig,
  type TwilioConfig,
  type ZoomConfig,
  discord,
  eventGrid,
  github,
  gitlab,
  hmac,
  intercom,
  linear,
  mailgun,
  msgraph,
  paddle,
  paypal,
  presets,
  sendgrid,
  shopify,
  slack,
  square,
  standardWebhooks,
  stripe,
  twilio,
  zoom,
} from './verify/index.js';

// CloudEvents: a source (HTTP binding, webhook handshake) and the envelope mapping
export {
  type CloudEventDedupe,
  type CloudEventKeyFrom,
  type CloudEventMapping,
  CE_HEADER,
  fromCloudEvent,
  toCloudEvent,
} from './cloudevents/mapping.js';
export type { CloudEventJson } from './cloudevents/attributes.js';
export { type CloudEventsConfig, cloudEvents } from './cloudevents/source.js';

// Per-tenant secrets: any sender above, its secrets looked up per tenant (cached, rotating)
export {
  type SecretsRequest,
  type TenantSecretsOptions,
  tenantSecrets,
} from './tenants/tenant-secrets.js';
export type { TenantFrom } from './tenants/tenant-of.js';

// Receiver, retention and relay
export {
  type NodeServerOptions,
  type ReceiveOutcome,
  type Receiver,
  type ReceiverConfig,
  type ReceiverTransport,
  type HonoContext,
  type RetentionJanitor,
  type RetentionJanitorOptions,
  DEFAULT_INBOX_RETENTION_MS,
  KEPT_HEADERS,
  TENANT_HEADER,
  assertRetentionCovers,
  createReceiver,
  createRetentionJanitor,
} from './receiver/index.js';
export { type Relay, type RelayOptions, createRelay } from './relay.js';

// Claim-check: the broker carries the event's reference, the worker loads it from the store
export type { ClaimCheckMode } from './claim-check/mode.js';
export { type ClaimCheckStore, keepsEnvelopes } from './claim-check/store.js';

// Outbox: events written in the application's transaction, published by the dispatcher
export type {
  OutboxEvent,
  OutboxLease,
  OutboxRow,
  OutboxStats,
  OutboxStore,
} from './contracts/outbox.js';
export {
  type OutboxDispatcher,
  type OutboxDispatcherOptions,
  createOutboxDispatcher,
} from './outbox/dispatcher.js';

// Worker
export {
  type EventHandler,
  type HandlerContext,
  type HandlerMiddleware,
  type HandlerStep,
  type RetryPolicy,
  type Worker,
  type WorkerConfig,
  type WorkerStatus,
  backoffCeiling,
  backoffDelay,
  createWorker,
  defineHandler,
  deriveIdempotencyKey,
} from './worker/index.js';

// Dead letters: redrive and discard through the event record, on every broker alike
export {
  type DeadLetterActionOptions,
  type DeadLetterActionResult,
  type DeadLetterSelection,
  REDRIVE_HEADER,
  discardDeadLetters,
  redriveDeadLetters,
} from './records/dead-letter-actions.js';
// Replay: a copy of a completed event that workers process again, on purpose
export {
  REPLAY_ID_HEADER,
  REPLAY_OF_HEADER,
  isReplayId,
  newReplayId,
  replayEnvelope,
} from './records/replay-envelope.js';

// Observability: our own Logger and metrics ports; pino and prom-client are the defaults
export { type Logger, DEFAULT_REDACT, createLogger, silentLogger } from './observability/logger.js';
export { MASKED, isSecretHeader, maskHeaders } from './observability/secret-headers.js';
export {
  type EventLogFields,
  errorLogFields,
  eventLogFields,
} from './observability/event-fields.js';
export {
  type MetricCounter,
  type MetricGauge,
  type MetricHistogram,
  type MetricLabels,
  type OnceflowMetrics,
  type PrometheusMetrics,
  createMetrics,
} from './observability/metrics.js';
export { type StoreMonitorOptions, createStoreMonitor } from './observability/store-monitor.js';

// Tracing: OpenTelemetry spans through @opentelemetry/api, a no-op until an SDK is registered
export { SPAN_ATTRIBUTES, TRACE_LINK_HEADER, TRACER_NAME } from './observability/tracing.js';
export {
  type Publisher,
  publishInNewTraces,
  publishTraced,
} from './observability/trace-publish.js';
export type { Ticker } from './ticker.js';
export {
  type BacklogMonitorOptions,
  createBacklogMonitor,
} from './observability/backlog-monitor.js';
export { type MetricsHandler, createMetricsHandler } from './observability/metrics-handler.js';

// Probes and shutdown: liveness and readiness handlers, and a drain on SIGTERM
export type { Check, CheckResult, ProbeReport } from './probes/checks.js';
export type { ProbeHandler } from './probes/handler.js';
export { type Probes, type ProbesOptions, createProbes } from './probes/probes.js';
export {
  type Closable,
  type ShutdownOptions,
  type ShutdownResult,
  shutdown,
} from './shutdown/shutdown.js';
export {
  type DrainOnSignalOptions,
  type SignalDrain,
  drainOnSignal,
} from './shutdown/drain-on-signal.js';
