/**
 * One connection of the resume suites (test/parity, test/stream): read, drop, read again with `after=`.
 */
import { WebSocket } from 'ws';
import type { Target } from './burst-targets.js';

export interface Session {
  ids: string[];
  close: { code: number; reason: string };
}

/**
 * One connection: reads until `stopAfter()` messages are in (then drops the connection, no close
 * handshake), until the server closes it, or until `timeoutMs` (dropped too).
 */
export function session(
  url: string,
  stopAfter: () => number,
  onOpen?: () => void,
  timeoutMs = 20_000,
  ids: string[] = [],
  control: { drop?: () => void } = {},
): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    let dropped = false;
    const drop = (): void => {
      dropped = true;
      ws.terminate();
    };
    const timer = setTimeout(drop, timeoutMs);
    control.drop = drop;
    ws.on('open', () => onOpen?.());
    ws.on('message', (data) => {
      if (dropped) return;
      ids.push((JSON.parse(data.toString()) as { id: string }).id);
      if (ids.length >= stopAfter()) drop();
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ ids, close: { code, reason: reason.toString() } });
    });
    ws.on('error', (e) => (dropped ? undefined : reject(e)));
  });
}

/** The stream address of `t` with the key and query parameters. */
export const urlWith = (t: Target, key: string, q: Record<string, string>) =>
  `${t.wsUrl}?${new URLSearchParams({ api_key: key, ...q })}`;
