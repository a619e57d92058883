/**
 * Each dependency failure (src/store/ports/errors.ts) counts in `fns_dependency_errors_total` and keeps its
 * readiness check red for `holdMs`, so /readyz shows outages a ping misses (a full disk: `SELECT 1` works).
 */
import { errorText, type Log } from '../domain/log.js';
import { dependencyFailureClass, type FailureClass } from '../http/unavailable.js';
import type { Dependency, Metrics } from './metrics.js';
import type { ReadinessCheck } from './admin.js';

export interface HealthOptions {
  metrics: Pick<Metrics, 'dependencyErrors'>;
  /** How long a failure keeps the readiness check red after it happened (ms). */
  holdMs: number;
  now?: () => number;
  /** Told once per outage (the first failure after a healthy spell): a log line. */
  log?: Log;
}

interface LastFailure {
  cls: FailureClass;
  message: string;
  at: number;
}

export class DependencyHealth {
  private readonly last = new Map<Dependency, LastFailure>();
  private readonly now: () => number;

  constructor(private readonly opts: HealthOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Counts and remembers `err` when it is a dependency failure; its class, or undefined. */
  report(dependency: Dependency, err: unknown): FailureClass | undefined {
    const cls = dependencyFailureClass(err);
    if (cls === undefined) return undefined;
    this.opts.metrics.dependencyErrors.inc({ dependency });
    const message = errorText(err);
    if (this.failure(dependency) === undefined)
      this.opts.log?.warn(
        { dependency, class: cls, err: message },
        'dependency failure: answering 503 / 1013 and /readyz not ready while it lasts',
      );
    this.last.set(dependency, { cls, message, at: this.now() });
    return cls;
  }

  /** The dependency's last failure while it still counts (within `holdMs`), else undefined. */
  failure(dependency: Dependency): LastFailure | undefined {
    const f = this.last.get(dependency);
    return f && this.now() - f.at < this.opts.holdMs ? f : undefined;
  }

  /** A readiness check: red while a failure counts, else as `probe` answers (a failed probe is reported too). */
  check(name: string, dependency: Dependency, probe: () => Promise<void>): ReadinessCheck {
    return {
      name,
      check: async () => {
        try {
          await probe();
        } catch (e) {
          this.report(dependency, e);
          throw e;
        }
        const f = this.failure(dependency);
        if (f) throw new Error(`${f.cls} failure ${((this.now() - f.at) / 1000).toFixed(1)} s ago: ${f.message}`);
      },
    };
  }

  /** `target`, its failing method calls (throw or rejection) reported and rethrown; methods run on `target` itself. */
  watch<T extends object>(dependency: Dependency, target: T): T {
    const wrapped = new WeakMap<(...a: unknown[]) => unknown, (...a: unknown[]) => unknown>();
    const onError = (e: unknown): never => {
      this.report(dependency, e);
      throw e;
    };
    return new Proxy(target, {
      get: (t, prop) => {
        const value: unknown = Reflect.get(t, prop, t);
        if (typeof value !== 'function' || typeof prop === 'symbol' || prop === 'constructor') return value;
        const fn = value as (...a: unknown[]) => unknown;
        let w = wrapped.get(fn);
        if (!w) {
          w = (...args: unknown[]): unknown => {
            let result: unknown;
            try {
              result = fn.apply(t, args);
            } catch (e) {
              return onError(e);
            }
            return result instanceof Promise ? result.catch(onError) : result;
          };
          wrapped.set(fn, w);
        }
        return w;
      },
    });
  }
}
