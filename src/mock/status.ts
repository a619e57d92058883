/**
 * The mock's status report: the contract's `operational` example, dated now, so a partner can build
 * against `/v1/status` and look at `/status` without a running service.
 */
import { statusExamples } from '../contract/index.js';
import type { StatusSource } from '../http/status.js';
import { renderStatusPage } from '../status/page.js';

/** Refreshed every few seconds, like the service's. */
const REFRESH_SECONDS = 5;

export function sampleStatus(clock: () => number): StatusSource {
  const report = () => ({ ...statusExamples.operational, generated_at: new Date(clock()).toISOString() });
  return {
    json: () => JSON.stringify(report()),
    html: () => renderStatusPage(report(), { refreshSeconds: REFRESH_SECONDS }),
  };
}
