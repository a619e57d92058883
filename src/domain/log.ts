/** The structured log, pino's shape: fields, then a short constant message (`log.warn({ source }, 'poll failed')`). */
export type LogFields = Record<string, unknown>;

export interface Log {
  info(fields: LogFields, msg: string): void;
  warn(fields: LogFields, msg: string): void;
  error(fields: LogFields, msg: string): void;
  /** The same log with these fields on every line (`log.child({ component: 'stream' })`). */
  child(bindings: LogFields): Log;
}

/** A Log that writes nothing (the default where no log is given). */
export const silentLog: Log = {
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLog,
};

/** A Log that writes one line per call, `msg {"field":…}`, to `write` (command-line tools, tests). */
export function lineLog(write: (line: string) => void, bindings: LogFields = {}): Log {
  const line = (fields: LogFields, msg: string) => {
    const all = { ...bindings, ...fields };
    write(Object.keys(all).length > 0 ? `${msg} ${JSON.stringify(all, errorsAsText)}` : msg);
  };
  return { info: line, warn: line, error: line, child: (more) => lineLog(write, { ...bindings, ...more }) };
}

/** An error in a field is written as its message. */
function errorsAsText(_key: string, value: unknown): unknown {
  return value instanceof Error ? value.message : value;
}

/** The message of anything thrown. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
