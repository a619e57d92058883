/** The status rules (src/status/rules.ts, report.ts): pure, the clock given. */
import { describe, expect, it } from 'vitest';
import {
  componentCauses,
  historyDays,
  overallState,
  pollFailureCause,
  quantile,
  sourceStatus,
  type LiveState,
} from '../../src/status/rules.js';
import { buildReport, liveState, type StoredSample } from '../../src/status/report.js';
import { DELAY_BOUNDS_MS, REST_BOUNDS_MS, type MinuteSample } from '../../src/status/sample.js';
import type { IncidentRecord, SourceRecord } from '../../src/store/ports/index.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-27T12:00:00Z');
const TODAY = Math.floor(NOW / DAY);

const calm: LiveState = {
  databaseFailing: false,
  embedderFailing: false,
  indexLoading: false,
  restAnswers: 1000,
  restServerErrors: 0,
  delayP99Ms: 50,
};

function source(over: Partial<SourceRecord> = {}): SourceRecord {
  return {
    name: 'Market-Wire',
    url: 'http://10.0.0.7:8080/private/feed?token=secret',
    everyMs: 30_000,
    urgency: 'auto',
    paused: false,
    createdAt: '2026-11-01T00:00:00.000Z',
    etag: null,
    lastModified: null,
    lastPollAt: '2026-11-27T11:59:50.000Z',
    lastStatus: 200,
    lastError: null,
    nextPollAt: null,
    failures: 0,
    minIntervalMs: null,
    itemsSeen: 10,
    itemsIngested: 10,
    itemsDeduplicated: 0,
    lastOkAt: '2026-11-27T11:59:50.000Z',
    failingSince: null,
    lastArticleAt: '2026-11-27T11:50:00.000Z',
    ...over,
  };
}

function sample(over: Partial<MinuteSample> = {}): MinuteSample {
  return {
    rest: new Array(REST_BOUNDS_MS.length + 1).fill(0),
    restServerErrors: 0,
    delay: new Array(DELAY_BOUNDS_MS.length + 1).fill(0),
    seq: 100,
    at: NOW - 1000,
    databaseFailing: false,
    indexLoading: false,
    embedderErrors: 0,
    ...over,
  };
}

const incident = (over: Partial<IncidentRecord>): IncidentRecord => ({
  id: 1,
  component: 'rest',
  kind: 'automatic',
  cause: 'server_errors',
  message: null,
  startedAt: NOW - 3_600_000,
  endedAt: null,
  ...over,
});

describe('a component is degraded while its own rule fails', () => {
  it('is operational when every rule holds', () => {
    expect(componentCauses(calm)).toEqual({ rest: null, stream: null, webhooks: null, search: null });
  });

  it('a failing database degrades every component, search too (it reads the ranked articles from the store)', () => {
    expect(componentCauses({ ...calm, databaseFailing: true })).toEqual({
      rest: 'database_unavailable',
      stream: 'database_unavailable',
      webhooks: 'database_unavailable',
      search: 'database_unavailable',
    });
  });

  it('REST is degraded by server errors above 1% of at least 20 answers', () => {
    expect(componentCauses({ ...calm, restAnswers: 1000, restServerErrors: 11 }).rest).toBe('server_errors');
    expect(componentCauses({ ...calm, restAnswers: 1000, restServerErrors: 10 }).rest).toBeNull();
    expect(componentCauses({ ...calm, restAnswers: 19, restServerErrors: 5 }).rest).toBeNull();
  });

  it('the stream is degraded by a delay p99 over 5 seconds', () => {
    expect(componentCauses({ ...calm, delayP99Ms: 10_000 }).stream).toBe('slow_delivery');
    expect(componentCauses({ ...calm, delayP99Ms: 5_000 }).stream).toBeNull();
    expect(componentCauses({ ...calm, delayP99Ms: null }).stream).toBeNull();
  });

  it('search is degraded while an index loads or the embedder fails', () => {
    expect(componentCauses({ ...calm, indexLoading: true }).search).toBe('index_loading');
    expect(componentCauses({ ...calm, embedderFailing: true }).search).toBe('embedder_unavailable');
  });
});

describe('a source is shown by its public name and the class of its failure only', () => {
  it('a source whose last poll failed is degraded since its first failed poll', () => {
    const s = sourceStatus(
      source({
        lastError: 'http: 503 Service Unavailable from 10.0.0.7',
        lastStatus: 503,
        failingSince: '2026-11-27T11:58:00.000Z',
      }),
      NOW,
    );
    expect(s).toMatchObject({
      state: 'degraded',
      cause: 'source_error_status',
      failing_since: '2026-11-27T11:58:00.000Z',
    });
    expect(JSON.stringify(s)).not.toMatch(/10\.0\.0\.7|token|secret|Service Unavailable/);
  });

  it('a source whose poll is more than 10 s overdue is degraded before the poll fails (an answer still awaited)', () => {
    const due = (ms: number) => new Date(NOW - ms).toISOString();
    expect(sourceStatus(source({ nextPollAt: due(10_001) }), NOW)).toMatchObject({
      state: 'degraded',
      cause: 'source_overdue',
      failing_since: null,
    });
    expect(sourceStatus(source({ nextPollAt: due(10_000) }), NOW).state).toBe('operational');
    expect(sourceStatus(source({ nextPollAt: null }), NOW).state).toBe('operational');
    expect(sourceStatus(source({ nextPollAt: due(60_000), paused: true }), NOW).state).toBe('paused');
  });

  it('after a restart, a poll time stored before it is overdue only 10 s after the service started', () => {
    const stale = source({ nextPollAt: new Date(NOW - 3_600_000).toISOString() });
    expect(sourceStatus(stale, NOW, NOW - 5_000).state).toBe('operational');
    expect(sourceStatus(stale, NOW, NOW - 11_000)).toMatchObject({ state: 'degraded', cause: 'source_overdue' });
  });

  it('maps each poll error kind to a cause class', () => {
    expect(pollFailureCause('timeout: no answer in 10 s')).toBe('source_unreachable');
    expect(pollFailureCause('refused: private address')).toBe('source_unreachable');
    expect(pollFailureCause('network: ECONNREFUSED 127.0.0.1:9')).toBe('source_unreachable');
    expect(pollFailureCause('parse: not a feed')).toBe('source_unreadable');
    expect(pollFailureCause('too-large: over 10 MiB')).toBe('source_unreadable');
    expect(pollFailureCause('store: connection refused')).toBe('database_unavailable');
    expect(pollFailureCause('internal: TypeError')).toBe('server_errors');
  });

  it('a paused source is paused, whatever its last poll', () => {
    const s = sourceStatus(
      source({ paused: true, lastError: 'timeout: x', failingSince: '2026-11-27T11:00:00.000Z' }),
      NOW,
    );
    expect(s).toMatchObject({ state: 'paused', cause: null, failing_since: null });
  });
});

describe('the overall state', () => {
  const ok = sourceStatus(source(), NOW);
  const failing = sourceStatus(source({ lastError: 'timeout: x', failingSince: '2026-11-27T11:58:00.000Z' }), NOW);
  const none = componentCauses(calm);

  it('is operational when every component and source is', () => {
    expect(overallState(none, [ok])).toBe('operational');
  });
  it('is degraded when one source fails and another works', () => {
    expect(overallState(none, [ok, { ...failing, name: 'Other' }])).toBe('degraded');
  });
  it('is an outage when every polled source fails, or the database does', () => {
    expect(overallState(none, [failing])).toBe('outage');
    expect(overallState(componentCauses({ ...calm, databaseFailing: true }), [ok])).toBe('outage');
  });
});

describe('percentiles are the upper bounds of histogram buckets', () => {
  it('answers the bucket the quantile falls in, null without observations', () => {
    expect(quantile([0, 0, 0], [10, 20], 0.5)).toBeNull();
    expect(quantile([98, 1, 1], [10, 20], 0.5)).toBe(10);
    expect(quantile([98, 1, 1], [10, 20], 0.99)).toBe(20);
    expect(quantile([0, 0, 5], [10, 20], 0.99)).toBe(20);
  });
});

describe('the daily history is the share of minutes operational', () => {
  const recorded = (entries: [number, number][]) => new Map(entries);

  it('is null before the first recorded day and 1 on a full day without incident', () => {
    const { first_day, operational } = historyDays(
      recorded([
        [TODAY - 1, 1440],
        [TODAY, 720],
      ]),
      [],
      NOW,
    );
    expect(first_day).toBe('2026-08-30');
    expect(operational).toHaveLength(90);
    expect(operational[87]).toBeNull();
    expect(operational.slice(88)).toEqual([1, 1]);
  });

  it('takes the minutes of an incident off the day, and the minutes no instance ran', () => {
    const yesterday = (TODAY - 1) * DAY;
    const hour = incident({ startedAt: yesterday + 3_600_000, endedAt: yesterday + 2 * 3_600_000 });
    const days = historyDays(
      recorded([
        [TODAY - 2, 10],
        [TODAY - 1, 1440],
      ]),
      [hour],
      NOW,
    ).operational;
    expect(days[88]).toBeCloseTo(23 / 24, 4);
    const down = historyDays(
      recorded([
        [TODAY - 2, 10],
        [TODAY - 1, 720],
      ]),
      [],
      NOW,
    ).operational;
    expect(down[88]).toBe(0.5);
  });

  it('counts an incident left open while no instance ran once, as minutes not run', () => {
    const yesterday = (TODAY - 1) * DAY;
    const allDay = incident({ startedAt: yesterday, endedAt: yesterday + DAY });
    const days = historyDays(
      recorded([
        [TODAY - 2, 10],
        [TODAY - 1, 720],
      ]),
      [allDay],
      NOW,
    ).operational;
    expect(days[88]).toBe(0);
    const half = incident({ startedAt: yesterday, endedAt: yesterday + DAY / 2 });
    expect(
      historyDays(
        recorded([
          [TODAY - 2, 10],
          [TODAY - 1, 720],
        ]),
        [half],
        NOW,
      ).operational[88],
    ).toBe(0.5);
  });

  it('counts an open incident up to now', () => {
    const open = incident({ startedAt: TODAY * DAY, endedAt: null });
    const days = historyDays(
      recorded([
        [TODAY - 1, 1440],
        [TODAY, 720],
      ]),
      [open],
      NOW,
    ).operational;
    expect(days[89]).toBe(0);
  });
});

describe('live state merges the running instances', () => {
  it('an instance whose last sample is stale no longer counts', () => {
    const samples: StoredSample[] = [
      {
        instance: 'a',
        minute: Math.floor(NOW / 60_000) - 2,
        sample: sample({ at: NOW - 120_000, indexLoading: true }),
      },
      { instance: 'b', minute: Math.floor(NOW / 60_000), sample: sample() },
    ];
    expect(liveState(samples, NOW).indexLoading).toBe(false);
    samples.push({ instance: 'a', minute: Math.floor(NOW / 60_000), sample: sample({ indexLoading: true }) });
    expect(liveState(samples, NOW).indexLoading).toBe(true);
  });

  it('adds the latency buckets of every instance', () => {
    const slow = sample({ delay: DELAY_BOUNDS_MS.map(() => 0).concat(10) });
    const samples = [
      { instance: 'a', minute: Math.floor(NOW / 60_000), sample: slow },
      { instance: 'b', minute: Math.floor(NOW / 60_000), sample: sample() },
    ];
    expect(liveState(samples, NOW).delayP99Ms).toBe(30_000);
  });
});

describe('the report', () => {
  it('never carries a source address or error text, and lists incidents by public id', () => {
    const report = buildReport(
      {
        sources: [
          source({
            lastError: 'network: connect ECONNREFUSED 10.0.0.7:8080',
            failingSince: '2026-11-27T11:58:00.000Z',
          }),
        ],
        samples: [{ instance: 'a', minute: Math.floor(NOW / 60_000), sample: sample() }],
        recorded: new Map([[TODAY, 720]]),
        incidents: [incident({ id: 7, component: 'source:Market-Wire', cause: 'source_unreachable' })],
      },
      NOW,
    );
    expect(report.state).toBe('outage');
    expect(report.incidents[0]).toMatchObject({ id: 'inc_7', component: 'source:Market-Wire', ended_at: null });
    expect(report.history.map((h) => h.component)).toEqual([
      'rest',
      'stream',
      'webhooks',
      'search',
      'source:Market-Wire',
    ]);
    expect(JSON.stringify(report)).not.toMatch(/10\.0\.0\.7|ECONNREFUSED|token|http:/);
  });

  it('counts articles per minute from the change feed position, over the time between two readings', () => {
    const m = Math.floor(NOW / 60_000);
    const at = (msAgo: number, seq: number) => ({
      instance: 'a',
      minute: Math.floor((NOW - msAgo) / 60_000),
      sample: sample({ seq, at: NOW - msAgo }),
    });
    const figures = (samples: StoredSample[]) =>
      buildReport({ sources: [], samples, recorded: new Map([[TODAY, 720]]), incidents: [] }, NOW).figures;
    // 50 articles between a reading 5 min ago (the interval's start) and one now: 10 a minute.
    expect(figures([at(300_000, 100), at(0, 150)]).articles_per_minute.last_5m).toBe(10);
    // Readings 8 and 2 minutes ago: the 5-minute rate is the growth since the one before the interval.
    expect(figures([at(480_000, 100), at(120_000, 160)]).articles_per_minute.last_5m).toBe(10);
    // A service that started 10 s ago: over a minute at least, no burst.
    expect(figures([at(10_000, 0), at(0, 30)]).articles_per_minute.last_5m).toBe(30);
    expect(
      figures([{ instance: 'a', minute: m - 20, sample: sample({ seq: 5, at: NOW - 1_200_000 }) }]).articles_per_minute
        .last_5m,
    ).toBe(0);
  });
});
