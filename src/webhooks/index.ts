/**
 * Webhooks (openapi.yaml `webhooks.article`): the public face of src/webhooks. The dispatcher delivers
 * the change feed to the endpoints; the rest are the pure rules it and the operator commands share.
 */
export {
  WebhookDispatcher,
  DISPATCH_DEFAULTS,
  type AttemptEvent,
  type AttemptOutcome,
  type DispatcherOptions,
  type DispatchStore,
} from './dispatcher.js';
export {
  checkUrlShape,
  resolveDestination,
  isNonPublicAddress,
  systemLookup,
  DestinationError,
  type Lookup,
} from './address.js';
export { pauseForPlan } from './plan.js';
export { nextRetry, baseDelay, CONTRACT_RETRY_RULES, type RetryRules, type RetryDecision } from './schedule.js';
export { newSecret, signedHeaders, signatureFor, secretKey } from './signing.js';
export { SecretBox } from './secrets.js';
export { newEndpointId, messageId, webhookBody } from './message.js';
export { httpSender, type Sender, type SendRequest, type SendResult } from './sender.js';
