/**
 * Dependency failures are read by class (connection, authentication, resource), not by a list of codes:
 * every member of a class answers 503 / 1013, counts in the metric and turns /readyz red.
 */
import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { dependencyFailureClass, isDependencyUnavailable } from '../../src/http/unavailable.js';
import { DependencyHealth } from '../../src/ops/health.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { SharedStateUnavailableError } from '../../src/state/errors.js';
import { isStoreBusy, isStoreUnavailable, StoreUnavailableError } from '../../src/store/ports/errors.js';
import { recordLog } from '../support/log.js';

const coded = (code: string, message = `failure ${code}`) => Object.assign(new Error(message), { code });
const reply = (message: string) => new ReplyError(message);

describe('a dependency failure is read by its class', () => {
  it.each([
    // connection: network errnos, SQLSTATE class 08, operator intervention, the driver's own messages
    ['ECONNREFUSED', coded('ECONNREFUSED'), 'connection'],
    ['ECONNRESET', coded('ECONNRESET'), 'connection'],
    ['ETIMEDOUT', coded('ETIMEDOUT'), 'connection'],
    ['EPIPE', coded('EPIPE'), 'connection'],
    ['EHOSTUNREACH', coded('EHOSTUNREACH'), 'connection'],
    ['08006 connection failure', coded('08006'), 'connection'],
    ['08P01 protocol violation (any 08xxx)', coded('08P01'), 'connection'],
    ['57P01 admin shutdown', coded('57P01'), 'connection'],
    ['57P03 cannot connect now', coded('57P03'), 'connection'],
    ['57P04 database dropped', coded('57P04'), 'connection'],
    [
      '55000 database not accepting connections (ALLOW_CONNECTIONS false)',
      coded('55000', 'database "test" is not currently accepting connections'),
      'connection',
    ],
    ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly'), 'connection'],
    ['pg: timeout exceeded when trying to connect', new Error('timeout exceeded when trying to connect'), 'connection'],
    ['ioredis: Connection is closed.', new Error('Connection is closed.'), 'connection'],
    // authentication: SQLSTATE class 28, Redis credentials
    ['28000 role not permitted to log in', coded('28000', 'role "x" is not permitted to log in'), 'authentication'],
    ['28P01 password authentication failed', coded('28P01'), 'authentication'],
    ['Redis NOAUTH', reply('NOAUTH Authentication required.'), 'authentication'],
    ['Redis WRONGPASS', reply('WRONGPASS invalid username-password pair'), 'authentication'],
    // resource: disk, memory, connections, I/O, locks and timeouts
    ['SQLITE_FULL', coded('SQLITE_FULL', 'database or disk is full'), 'resource'],
    ['SQLITE_IOERR_WRITE', coded('SQLITE_IOERR_WRITE'), 'resource'],
    ['SQLITE_IOERR (plain)', coded('SQLITE_IOERR'), 'resource'],
    ['SQLITE_NOMEM', coded('SQLITE_NOMEM'), 'resource'],
    ['SQLITE_BUSY', coded('SQLITE_BUSY'), 'resource'],
    ['SQLITE_LOCKED_SHAREDCACHE', coded('SQLITE_LOCKED_SHAREDCACHE'), 'resource'],
    ['SQLITE_CANTOPEN', coded('SQLITE_CANTOPEN'), 'resource'],
    ['ENOSPC', coded('ENOSPC'), 'resource'],
    ['EDQUOT', coded('EDQUOT'), 'resource'],
    ['EMFILE', coded('EMFILE'), 'resource'],
    ['53100 disk full', coded('53100'), 'resource'],
    ['53200 out of memory', coded('53200'), 'resource'],
    ['53300 too many connections', coded('53300'), 'resource'],
    ['53400 configuration limit exceeded (any 53xxx)', coded('53400'), 'resource'],
    ['58030 I/O error', coded('58030'), 'resource'],
    ['55P03 lock not available', coded('55P03'), 'resource'],
    ['57014 statement timeout', coded('57014'), 'resource'],
    ['40P01 deadlock', coded('40P01'), 'resource'],
    ['Redis LOADING', reply('LOADING Redis is loading the dataset in memory'), 'resource'],
    ['Redis BUSY', reply('BUSY Redis is busy running a script.'), 'resource'],
    ['Redis OOM', reply("OOM command not allowed when used memory > 'maxmemory'."), 'resource'],
    ['Redis READONLY', reply("READONLY You can't write against a read only replica."), 'resource'],
    // wrappers take their cause's class, connection when the cause has none
    [
      'StoreUnavailableError around 28000',
      new StoreUnavailableError('PostgreSQL unavailable', { cause: coded('28000') }),
      'authentication',
    ],
    ['StoreUnavailableError without a cause', new StoreUnavailableError('PostgreSQL unavailable'), 'connection'],
    [
      'SharedStateUnavailableError around OOM',
      new SharedStateUnavailableError('slots', { cause: reply('OOM no memory') }),
      'resource',
    ],
    ['SharedStateUnavailableError without a cause', new SharedStateUnavailableError('slots: timeout'), 'connection'],
    ['an error marked unavailable', Object.assign(new Error('x'), { unavailable: true }), 'connection'],
    ['an error caused by ENOSPC', new Error('write failed', { cause: coded('ENOSPC') }), 'resource'],
  ])('%s is a %s failure', (_name, err, cls) => {
    expect(dependencyFailureClass(err)).toBe(cls);
    expect(isDependencyUnavailable(err)).toBe(true);
  });

  it.each([
    ['a syntax error (42601)', coded('42601')],
    ['a unique violation (23505)', coded('23505')],
    ['another 55000 (object not in prerequisite state)', coded('55000', 'currval of sequence "s" is not yet defined')],
    ['SQLITE_CONSTRAINT', coded('SQLITE_CONSTRAINT_UNIQUE')],
    ['SQLITE_CORRUPT', coded('SQLITE_CORRUPT')],
    ['a plain Error', new Error('boom')],
    ['an Error of ours that starts with BUSY (not a Redis reply)', new Error('BUSY doing something')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
  ])('%s is no dependency failure (it stays a 500)', (_name, err) => {
    expect(dependencyFailureClass(err)).toBeUndefined();
    expect(isDependencyUnavailable(err)).toBe(false);
  });

  it('a lock held by another process is busy (retried by the CLI), not "unavailable" (the pooled connection is kept)', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_LOCKED', '55P03']) {
      expect(isStoreBusy(coded(code))).toBe(true);
      expect(isStoreUnavailable(coded(code))).toBe(false);
    }
    for (const code of ['28000', '53100', 'SQLITE_FULL', 'ECONNREFUSED'])
      expect(isStoreUnavailable(coded(code))).toBe(true);
  });
});

describe('a dependency failure is counted and keeps the readiness check red while it lasts', () => {
  const setup = () => {
    const metrics = createMetrics({ defaultMetrics: false });
    let now = 1_000;
    const logs: string[] = [];
    const health = new DependencyHealth({ metrics, holdMs: 5000, now: () => now, log: recordLog(logs) });
    const count = async () => {
      const text = await metrics.render();
      return Number(/fns_dependency_errors_total\{dependency="database"\} (\d+)/.exec(text)?.[1]);
    };
    return { metrics, health, logs, count, advance: (ms: number) => (now += ms) };
  };

  it('counts failures of a class, ignores others, and holds the check red for holdMs after the last one', async () => {
    const { health, count, logs, advance } = setup();
    const check = health.check('database', 'database', async () => {});
    await expect(check.check()).resolves.toBeUndefined();
    expect(health.report('database', new Error('bug'))).toBeUndefined();
    expect(await count()).toBe(0);
    expect(health.report('database', coded('SQLITE_FULL', 'database or disk is full'))).toBe('resource');
    expect(health.report('database', coded('SQLITE_FULL', 'database or disk is full'))).toBe('resource');
    expect(await count()).toBe(2);
    expect(logs).toHaveLength(1); // once per outage, not per call
    await expect(check.check()).rejects.toThrow(/resource failure .* database or disk is full/);
    advance(4999);
    await expect(check.check()).rejects.toThrow(/resource/);
    advance(1);
    await expect(check.check()).resolves.toBeUndefined();
  });

  it('a failing probe fails the check and is counted', async () => {
    const { health, count } = setup();
    const check = health.check('database', 'database', async () => {
      throw coded('28000', 'role "x" is not permitted to log in');
    });
    await expect(check.check()).rejects.toThrow(/not permitted/);
    expect(await count()).toBe(1);
  });

  it('watch() reports rejected and thrown failures of any method, passes results through, and keeps assignments on the object', async () => {
    const { health, count } = setup();
    class Store {
      #rows = 3;
      async count(): Promise<number> {
        return this.#rows;
      }
      async insert(): Promise<void> {
        throw coded('SQLITE_FULL');
      }
      close(): void {
        throw coded('SQLITE_IOERR_CLOSE');
      }
    }
    const raw = new Store();
    const store = health.watch('database', raw);
    expect(store).toBeInstanceOf(Store);
    expect(await store.count()).toBe(3);
    await expect(store.insert()).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    expect(() => store.close()).toThrow();
    expect(await count()).toBe(2);
    // A test (or an operator hook) replacing a method through the wrapper replaces it on the object.
    store.count = async () => {
      throw coded('ECONNREFUSED');
    };
    await expect(raw.count()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(store.count()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await count()).toBe(3);
  });
});
