/**
 * Webhooks (openapi.yaml `webhooks.article`): the public face of src/webhooks. The dispatcher delivers
 * the change feed to the endpoints; the rest are the pure rules it and the operator commands share.
 */
export { WebhookDispatcher, DISPATCH_DEFAULTS, type AttemptEvent, type DispatcherOptions } from './dispatcher.js';
export { checkUrlShape, resolveDestination, DestinationError, type Lookup } from './address.js';
export { type RetryRules } from './schedule.js';
export { newSecret, signedHeaders } from './signing.js';
export { SecretBox } from './secrets.js';
export { newEndpointId, messageId, webhookBody } from './message.js';
export { httpSender, type Sender } from './sender.js';
