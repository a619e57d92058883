/** An instance's per-minute figures, read from its Prometheus metrics as differences between readings. */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/ops/metrics.js';
import { DELAY_BOUNDS_MS, MinuteSampler, parseSample, REST_BOUNDS_MS } from '../../src/status/sample.js';

const state = { seq: 7, databaseFailing: false, indexLoading: false };

describe('a minute sample counts what happened since the last reading', () => {
  it('puts contract operations in their latency bucket, leaves out requests no route matched and 503s', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const sampler = new MinuteSampler(metrics);
    metrics.requestDuration.observe({ operation: 'listNews' }, 0.1); // before the first reading: not counted
    await sampler.read(100, 1, state);
    metrics.requestDuration.observe({ operation: 'listNews' }, 0.003);
    metrics.requests.inc({ operation: 'listNews', status: 500 });
    metrics.requests.inc({ operation: 'searchNews', status: 503 }); // a dependency outage: its own cause
    metrics.requestDuration.observe({ operation: 'none' }, 0.003);
    metrics.requests.inc({ operation: 'none', status: 500 });
    metrics.deliveryLag.observe(0.02);
    metrics.dependencyErrors.inc({ dependency: 'embedder' });
    const s = await sampler.read(100, 2, state);
    expect(s.rest[REST_BOUNDS_MS.indexOf(5)]).toBe(1);
    expect(s.rest.reduce((a, b) => a + b, 0)).toBe(1);
    expect(s.restServerErrors).toBe(1);
    expect(s.delay[DELAY_BOUNDS_MS.indexOf(25)]).toBe(1);
    expect(s.embedderErrors).toBe(1);
  });

  it('adds up the readings of one minute and starts again at the next', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const sampler = new MinuteSampler(metrics);
    await sampler.read(100, 1, state);
    metrics.deliveryLag.observe(0.02);
    await sampler.read(100, 2, state);
    metrics.deliveryLag.observe(0.02);
    const same = await sampler.read(100, 3, { ...state, seq: 9 });
    expect(same.delay.reduce((a, b) => a + b, 0)).toBe(2);
    expect(same).toMatchObject({ seq: 9, at: 3 });
    metrics.deliveryLag.observe(40);
    const next = await sampler.read(101, 4, state);
    expect(next.delay.reduce((a, b) => a + b, 0)).toBe(1);
    expect(next.delay.at(-1)).toBe(1);
  });
});

describe('a stored sample this version cannot read is left out', () => {
  it('reads its own samples and refuses corrupt rows or rows without buckets', async () => {
    const sampler = new MinuteSampler(createMetrics({ defaultMetrics: false }));
    const own = await sampler.read(100, 1, state);
    expect(parseSample(JSON.stringify(own))).toEqual(own);
    for (const bad of ['{', 'null', '[]', '{"at":1,"seq":2}', '{"rest":[1],"delay":["x"],"at":1,"seq":2}'])
      expect(parseSample(bad), bad).toBeUndefined();
  });
});
