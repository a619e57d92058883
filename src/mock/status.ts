/** The mock's /v1/status and /status: the contract's examples dated now (`Prefer: example=sourceFailing`, code=400). */
import type express from 'express';
import { statusExamples } from '../contract/index.js';
import { sendProblem } from '../http/problem.js';
import { mountStatus } from '../http/status.js';
import { renderStatusPage } from '../status/page.js';
import { DAY_MS, HISTORY_DAYS, iso, PAGE_REFRESH_SECONDS } from '../status/rules.js';
import { parsePrefer, refuseUnservablePrefer } from './prefer.js';

/** The detail of the contract's 400 example for this operation (`UnknownParameter`). */
const UNKNOWN_PARAMETER = 'page is not a parameter of this operation';

function preferred(req: express.Request, res: express.Response): string | undefined | false {
  if (refuseUnservablePrefer('getServiceStatus', req, res)) return false;
  const prefs = parsePrefer(req.get('prefer'));
  if (prefs.get('code') === '400') {
    sendProblem(res, 'invalidParameter', UNKNOWN_PARAMETER);
    return false;
  }
  const example = prefs.get('example');
  return typeof example === 'string' ? example : undefined;
}

export function mountMockStatus(app: express.Express, clock: () => number, validateResponses: boolean): void {
  // The example dated now: generated now, its 90 days of history ending today.
  const report = (example?: string) => {
    const base = example === 'sourceFailing' ? statusExamples.sourceFailing : statusExamples.operational;
    const now = clock();
    const firstDay = iso(now - (HISTORY_DAYS - 1) * DAY_MS).slice(0, 10);
    return {
      ...base,
      generated_at: iso(now),
      history: base.history.map((h) => ({ ...h, first_day: firstDay })),
    };
  };
  mountStatus(
    app,
    {
      json: (example) => JSON.stringify(report(example)),
      html: () => renderStatusPage(report(), { refreshSeconds: PAGE_REFRESH_SECONDS }),
    },
    { validateResponses, prefer: preferred },
  );
}
