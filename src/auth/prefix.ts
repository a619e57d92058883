/** The prefix of the keys a deployment accepts and issues: the contract's live prefix with the brand word. */
import type { Config } from '../config/index.js';
import { limits } from '../contract/index.js';

export function livePrefix(config: Pick<Config, 'brand'>): string {
  return limits.keyPrefixes.live.replace(/^fns_/, `${config.brand}_`);
}
