/**
 * A dependency that cannot answer for a moment:
 * every operation answers the contract's 503 problem with Retry-After, never a 500; the stream refuses
 * new connections with its "retry later" close code.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limits, problems, stream } from '../../src/contract/index.js';
import { OPERATION_PATHS } from '../../src/http/admission.js';
import { SharedStateUnavailableError } from '../../src/state/errors.js';
import { get, startTestService, type TestService } from '../support/service.js';
import { connect, useStreamHarness } from '../stream/support.js';

const unreachable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { unavailable: true });
const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

describe('REST: a database that cannot answer gives 503 with Retry-After, never a 500', () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService();
  });
  afterEach(async () => svc.close());

  it.each([
    ['unreachable', unreachable],
    ['locked by another process', busy],
  ])('answers every operation with the serviceUnavailable problem when the store is %s', async (_what, failure) => {
    const { key } = await svc.key('max');
    const findKey = svc.store.accounts.findKey.bind(svc.store.accounts);
    svc.store.accounts.findKey = async () => {
      throw failure();
    };
    for (const path of Object.values(OPERATION_PATHS)) {
      const r = await get(svc.port, `${path}${path.endsWith('search') ? '?q=fed' : ''}`, { key, ip: '127.80.0.1' });
      expect(r.status, path).toBe(503);
      expect(r.headers['content-type']).toBe('application/problem+json');
      expect(r.body).toEqual(problems.serviceUnavailable);
      expect(r.headers['retry-after']).toBe(String(limits.unavailableRetryAfterSeconds));
    }
    svc.store.accounts.findKey = findKey;
    expect((await get(svc.port, '/v1/news', { key, ip: '127.80.0.2' })).status).toBe(200);
  });

  it('sends Retry-After with the embedding 503 too', async () => {
    const { key } = await svc.key('max');
    svc.embedder.failing = true;
    const r = await get(svc.port, '/v1/news/search?q=fed', { key, ip: '127.80.0.3' });
    expect(r.body).toEqual(problems.embeddingUnavailable);
    expect(r.headers['retry-after']).toBe(String(limits.unavailableRetryAfterSeconds));
  });
});

describe('stream: shared state that cannot answer refuses new connections with "retry later"', () => {
  const ctx = useStreamHarness();
  it('closes a new connection with the unavailable close code when the slots cannot be checked', async () => {
    const { key } = await ctx.h.key('pro');
    ctx.h.slots.tryAcquire = async () => {
      throw new SharedStateUnavailableError('redis: connection refused');
    };
    const c = connect(ctx.h.url, { key });
    expect(await c.closed).toEqual(stream.closeCodes.unavailable);
  });
});
