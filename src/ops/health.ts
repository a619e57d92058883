/**
 * What the instance knows about its dependencies' health from the calls it makes: every failed call of
 * a dependency-failure class (src/store/ports/errors.ts: connection, authentication, resource) is counted in
 * `fns_dependency_errors_total` and keeps that dependency's readiness check red for `holdMs` after the
 * last one, so `/readyz` tells the load balancer about an outage that a plain ping would not see (a
 * full disk: reads and `SELECT 1` still work, every write fails). When the failures stop and the
 * probe answers, the check is green again by itself.
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

  /**
   * The same object, with every failing method call (a thrown error or a rejected promise) reported
   * for `dependency` and rethrown unchanged. Methods run on the object itself (private state intact);
   * properties assigned through the wrapper land on the object.
   */
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
