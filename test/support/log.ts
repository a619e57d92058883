/** Logs for tests: every line as text (`msg {fields}`), and the warnings with their fields. */
import { lineLog, type Log, type LogFields } from '../../src/domain/log.js';

export function recordLog(lines: string[] = [], warnings: { fields: LogFields; msg: string }[] = []): Log {
  const text = lineLog((l) => lines.push(l));
  const log: Log = {
    info: (f, m) => text.info(f, m),
    warn: (f, m) => (warnings.push({ fields: f, msg: m }), text.warn(f, m)),
    error: (f, m) => (warnings.push({ fields: f, msg: m }), text.error(f, m)),
    child: (b) => {
      const inner = recordLog(lines, warnings);
      return {
        ...inner,
        info: (f, m) => inner.info({ ...b, ...f }, m),
        warn: (f, m) => inner.warn({ ...b, ...f }, m),
        error: (f, m) => inner.error({ ...b, ...f }, m),
      };
    },
  };
  return log;
}
