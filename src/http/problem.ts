import type { Response } from 'express';
import { problems, type Problem, type ProblemKind } from '../contract/index.js';

export const PROBLEM_TYPE = 'application/problem+json';

/** Sends one of the contract's problems; `detail` may be replaced (validation names the parameter). */
export function sendProblem(res: Response, kind: ProblemKind, detail?: string): void {
  const body: Problem = detail === undefined ? problems[kind] : { ...problems[kind], detail };
  res.status(body.status).type(PROBLEM_TYPE).send(JSON.stringify(body));
}

/** Problems outside the contract's operations (unknown path, wrong method, unexpected fault). */
export function sendGenericProblem(res: Response, status: number, title: string, detail: string): void {
  const body: Problem = { type: 'about:blank', title, status, detail };
  res.status(status).type(PROBLEM_TYPE).send(JSON.stringify(body));
}
