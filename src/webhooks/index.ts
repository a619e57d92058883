/** Webhooks (openapi.yaml `webhooks.article`): the dispatcher and the pure rules it shares with operator commands. */
export { WebhookDispatcher, DISPATCH_DEFAULTS, type AttemptEvent, type DispatcherOptions } from './dispatcher.js';
export { checkUrlShape, resolveDestination, DestinationError, type Lookup } from './address.js';
export { type RetryRules } from './schedule.js';
export { newSecret, signedHeaders } from './signing.js';
export { SecretBox, SecretKeyError } from './secrets.js';
export { newEndpointId, messageId, webhookBody } from './message.js';
export { httpSender, type Sender } from './sender.js';
