/** Per-minute figures of an instance for the status report, read from its metrics: the request path is untouched. */
import { LAG_BUCKETS, LATENCY_BUCKETS, type Metrics } from '../ops/metrics.js';

/** One instance's figures of one minute (stored as JSON). */
export interface MinuteSample {
  /** REST answers by latency bucket (REST_BOUNDS_MS, then one above them). */
  rest: number[];
  restServerErrors: number;
  /** Stream deliveries by delay bucket (DELAY_BOUNDS_MS, then one above them). */
  delay: number[];
  /** The newest change-feed position seen this minute (articles stored so far, by any instance). */
  seq: number;
  /** What the instance knew at its last reading (epoch ms `at`). */
  at: number;
  databaseFailing: boolean;
  indexLoading: boolean;
  /** Failed calls of the embedder this minute. */
  embedderErrors: number;
}

const toMs = (seconds: number) => Math.round(seconds * 1e6) / 1e3;
/** The histogram buckets of the metrics, in ms. */
export const REST_BOUNDS_MS = LATENCY_BUCKETS.map(toMs);
export const DELAY_BOUNDS_MS = LAG_BUCKETS.map(toMs);

const REQUEST_DURATION = 'fns_http_request_duration_seconds';
const REQUESTS = 'fns_http_requests_total';
const DELIVERY_LAG = 'fns_stream_delivery_lag_seconds';
const DEPENDENCY_ERRORS = 'fns_dependency_errors_total';

interface MetricValue {
  value: number;
  metricName?: string;
  labels: Record<string, string | number | undefined>;
}

async function valuesOf(metrics: Pick<Metrics, 'registry'>, name: string): Promise<MetricValue[]> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`metric ${name} is not registered: src/ops/metrics.ts and src/status disagree`);
  return (await metric.get()).values as MetricValue[];
}

/** Per-bucket counts (not cumulative) of a histogram, summed over its labels; `keep` filters by label. */
async function bucketCounts(
  metrics: Pick<Metrics, 'registry'>,
  name: string,
  bounds: readonly number[],
  keep: (labels: MetricValue['labels']) => boolean = () => true,
): Promise<number[]> {
  const cumulative = new Array<number>(bounds.length + 1).fill(0);
  for (const v of await valuesOf(metrics, name)) {
    if (v.metricName !== `${name}_bucket` || !keep(v.labels)) continue;
    const le = v.labels.le === '+Inf' ? bounds.length : bounds.indexOf(toMs(Number(v.labels.le)));
    if (le < 0) throw new Error(`${name} has a bucket (${v.labels.le} s) it was not created with`);
    cumulative[le]! += v.value;
  }
  return cumulative.map((c, i) => c - (i === 0 ? 0 : cumulative[i - 1]!));
}

/**
 * Contract operations only: a request no route matched (a 404, the status page itself) is not the REST API's answer.
 */
const isOperation = (labels: MetricValue['labels']) => labels.operation !== 'none';

/** A REST server error: 5xx but 503, the designed outage answer the status rules report by their own causes. */
const isServerError = (status: number) => status >= 500 && status !== 503;

/** The metrics' totals since the instance started. */
interface Totals {
  rest: number[];
  restServerErrors: number;
  delay: number[];
  embedderErrors: number;
}

async function readTotals(metrics: Pick<Metrics, 'registry'>): Promise<Totals> {
  let restServerErrors = 0;
  for (const v of await valuesOf(metrics, REQUESTS))
    if (isOperation(v.labels) && isServerError(Number(v.labels.status))) restServerErrors += v.value;
  let embedderErrors = 0;
  for (const v of await valuesOf(metrics, DEPENDENCY_ERRORS))
    if (v.labels.dependency === 'embedder') embedderErrors += v.value;
  return {
    embedderErrors,
    rest: await bucketCounts(metrics, REQUEST_DURATION, REST_BOUNDS_MS, isOperation),
    restServerErrors,
    delay: await bucketCounts(metrics, DELIVERY_LAG, DELAY_BOUNDS_MS),
  };
}

const minus = (a: number[], b: number[]) => a.map((x, i) => x - (b[i] ?? 0));
const plus = (a: number[], b: number[]) => a.map((x, i) => x + (b[i] ?? 0));

export interface InstanceState {
  seq: number;
  databaseFailing: boolean;
  indexLoading: boolean;
}

/** Accumulates the current minute's figures from successive readings of the metrics. */
export class MinuteSampler {
  private last: Totals | undefined;
  private minute = -1;
  private current: MinuteSample | undefined;

  constructor(private readonly metrics: Pick<Metrics, 'registry'>) {}

  /** Adds what happened since the last reading; the sample of `minute` (epoch minutes) so far. */
  async read(minute: number, at: number, state: InstanceState): Promise<MinuteSample> {
    const totals = await readTotals(this.metrics);
    const last = this.last ?? totals;
    this.last = totals;
    const added = {
      rest: minus(totals.rest, last.rest),
      restServerErrors: totals.restServerErrors - last.restServerErrors,
      delay: minus(totals.delay, last.delay),
      embedderErrors: totals.embedderErrors - last.embedderErrors,
    };
    const base = minute === this.minute && this.current ? this.current : undefined;
    this.minute = minute;
    this.current = {
      rest: base ? plus(base.rest, added.rest) : added.rest,
      restServerErrors: (base?.restServerErrors ?? 0) + added.restServerErrors,
      delay: base ? plus(base.delay, added.delay) : added.delay,
      embedderErrors: (base?.embedderErrors ?? 0) + added.embedderErrors,
      at,
      ...state,
      seq: Math.max(base?.seq ?? 0, state.seq),
    };
    return this.current;
  }
}

/** A stored sample, or undefined for a row this version cannot read: that row is left out, never the report. */
export function parseSample(text: string): MinuteSample | undefined {
  let s: Partial<MinuteSample>;
  try {
    s = JSON.parse(text) as Partial<MinuteSample>;
  } catch {
    return undefined;
  }
  const numbers = (xs: unknown) => Array.isArray(xs) && xs.every((x) => typeof x === 'number');
  const ok =
    typeof s === 'object' &&
    s !== null &&
    numbers(s.rest) &&
    numbers(s.delay) &&
    typeof s.at === 'number' &&
    typeof s.seq === 'number';
  return ok
    ? ({ restServerErrors: 0, embedderErrors: 0, databaseFailing: false, indexLoading: false, ...s } as MinuteSample)
    : undefined;
}

/** Samples of the minutes given, merged: latency buckets and errors added, the feed position at its highest. */
export function mergeSamples(
  samples: readonly MinuteSample[],
): Pick<MinuteSample, 'rest' | 'restServerErrors' | 'delay'> {
  let rest = new Array<number>(REST_BOUNDS_MS.length + 1).fill(0);
  let delay = new Array<number>(DELAY_BOUNDS_MS.length + 1).fill(0);
  let restServerErrors = 0;
  for (const s of samples) {
    rest = plus(rest, s.rest);
    delay = plus(delay, s.delay);
    restServerErrors += s.restServerErrors;
  }
  return { rest, restServerErrors, delay };
}
