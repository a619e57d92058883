/**
 * The mock's `Prefer` (README, "Reaching the other documented responses"): `code=` and `example=` go to Prism;
 * what the operation does not document is answered here: a `400` naming what it does (Prism would say 404 or 500).
 */
import type { Request, Response } from 'express';
import { openapiDocument } from '../contract/index.js';
import { sendProblem } from '../http/problem.js';
import { echo } from '../http/target.js';

/** `Prefer` preferences (RFC 7240) as Prism parses them: case-insensitive tokens, first wins, `;` params ignored. */
export function parsePrefer(header: string | undefined): Map<string, string | true> {
  const prefs = new Map<string, string | true>();
  if (!header) return prefs;
  for (const preference of splitOutsideQuotes(header, ',')) {
    const segment = splitOutsideQuotes(preference, ';')[0]!;
    const eq = segment.indexOf('=');
    const token = (eq === -1 ? segment : segment.slice(0, eq)).trim().toLowerCase();
    if (!token || prefs.has(token)) continue;
    let value = eq === -1 ? '' : segment.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    prefs.set(token, value === '' ? true : value);
  }
  return prefs;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (text[i] === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

interface DocumentedResponses {
  /** The documented statuses, in the contract's order. */
  statuses: string[];
  /** The status Prism answers without `code` (the first 2xx). */
  success: string;
  /** The named examples of each status (all media types). */
  examples: Record<string, string[]>;
}

/** Per operation id: its documented statuses and their named examples, from the bundled contract. */
function documentedResponses(): Map<string, DocumentedResponses> {
  const doc = openapiDocument();
  const deref = (n: any): any =>
    n?.$ref
      ? deref(
          n.$ref
            .slice(2)
            .split('/')
            .reduce((x: any, k: string) => x[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc),
        )
      : n;
  const byOperation = new Map<string, DocumentedResponses>();
  for (const item of Object.values<any>(doc.paths)) {
    for (const op of Object.values<any>(item)) {
      if (typeof op?.operationId !== 'string') continue;
      const statuses = Object.keys(op.responses);
      const examples: Record<string, string[]> = {};
      for (const status of statuses) {
        const content = deref(op.responses[status]).content ?? {};
        examples[status] = [
          ...new Set(Object.values<any>(content).flatMap((media) => Object.keys(media.examples ?? {}))),
        ];
      }
      byOperation.set(op.operationId, {
        statuses,
        success: statuses.find((s) => /^2\d\d$/.test(s)) ?? statuses[0]!,
        examples,
      });
    }
  }
  return byOperation;
}

let documented: Map<string, DocumentedResponses> | undefined;

/** Why Prism cannot serve this `Prefer` (an undocumented `code` or `example`): the 400's detail; else undefined. */
export function preferProblem(operationId: string, header: string | undefined): string | undefined {
  const prefs = parsePrefer(header);
  const code = prefs.get('code');
  const example = prefs.get('example');
  if (code === undefined && example === undefined) return undefined;
  documented ??= documentedResponses();
  const op = documented.get(operationId);
  if (!op) throw new Error(`no operation ${operationId} in the contract`);
  if (code !== undefined && (code === true || !op.statuses.includes(code))) {
    return `Prefer code=${code === true ? '' : echo(code)} is not documented for ${operationId}; documented: ${op.statuses.join(', ')}`;
  }
  const status = code === undefined ? op.success : code;
  if (example !== undefined && (example === true || !op.examples[status]!.includes(example))) {
    const names = op.examples[status]!;
    return `Prefer example=${example === true ? '' : echo(example)} is not documented for ${operationId} ${status}; documented: ${names.length ? names.join(', ') : 'none'}`;
  }
  return undefined;
}

/** Answers an unservable `Prefer` with a `400` (after admission, like every 400) and returns true. */
export function refuseUnservablePrefer(operationId: string, req: Request, res: Response): boolean {
  const detail = preferProblem(operationId, req.get('prefer'));
  if (detail === undefined) return false;
  sendProblem(res, 'invalidParameter', detail);
  return true;
}
