/** The status report from the store's rows: pure, so every instance builds the same report from the same rows. */
import type { IncidentRecord, SourceRecord, StatusCause } from '../store/ports/index.js';
import {
  COMPONENT_NAMES,
  componentCauses,
  historyDays,
  iso,
  MINUTE_MS,
  minuteOf,
  overallState,
  percentiles,
  quantile,
  sourceStatus,
  type ComponentId,
  type LiveState,
  type SourceStatus,
  type StatusReport,
} from './rules.js';
import { DELAY_BOUNDS_MS, mergeSamples, REST_BOUNDS_MS, type MinuteSample } from './sample.js';

export interface StoredSample {
  instance: string;
  minute: number;
  sample: MinuteSample;
}

/** An instance counts as running while its last sample is younger than this. */
const FRESH_SAMPLE_MS = 20_000;

const within = (samples: readonly StoredSample[], now: number, minutes: number) =>
  samples.filter((s) => s.minute > minuteOf(now) - minutes).map((s) => s.sample);

/** What the running instances report now, and the REST and stream figures of the last 5 minutes. */
export function liveState(samples: readonly StoredSample[], now: number): LiveState {
  const latest = new Map<string, MinuteSample>();
  for (const s of samples)
    if (now - s.sample.at < FRESH_SAMPLE_MS && (latest.get(s.instance)?.at ?? -1) < s.sample.at)
      latest.set(s.instance, s.sample);
  const running = [...latest.values()];
  const last5 = mergeSamples(within(samples, now, 5));
  return {
    databaseFailing: running.some((s) => s.databaseFailing),
    embedderFailing: running.some((s) => s.embedderErrors > 0),
    indexLoading: running.some((s) => s.indexLoading),
    restAnswers: last5.rest.reduce((a, b) => a + b, 0),
    restServerErrors: last5.restServerErrors,
    delayP99Ms: quantile(last5.delay, DELAY_BOUNDS_MS, 0.99),
  };
}

/** Articles stored per minute: feed growth since the last reading before the window, over ≥ 1 min (no start burst). */
function articlesPerMinute(samples: readonly StoredSample[], now: number, minutes: number): number {
  const from = now - minutes * MINUTE_MS;
  const inside = samples.filter((s) => s.sample.at > from).map((s) => s.sample);
  if (inside.length === 0) return 0;
  const before = samples.filter((s) => s.sample.at <= from).map((s) => s.sample);
  const base = before.length
    ? before.reduce((a, b) => (b.at > a.at ? b : a))
    : inside.reduce((a, b) => (b.at < a.at ? b : a));
  const latest = inside.reduce((a, b) => (b.at > a.at ? b : a));
  const elapsed = Math.max(1, (latest.at - base.at) / MINUTE_MS);
  return Math.round((Math.max(0, latest.seq - base.seq) / elapsed) * 10) / 10;
}

function figures(samples: readonly StoredSample[], now: number): StatusReport['figures'] {
  const last5 = mergeSamples(within(samples, now, 5));
  const hour = mergeSamples(within(samples, now, 60));
  return {
    stream_delay_ms: {
      last_5m: percentiles(last5.delay, DELAY_BOUNDS_MS),
      last_hour: percentiles(hour.delay, DELAY_BOUNDS_MS),
    },
    articles_per_minute: {
      last_5m: articlesPerMinute(samples, now, 5),
      last_hour: articlesPerMinute(samples, now, 60),
    },
    rest_p99_ms: {
      last_5m: quantile(last5.rest, REST_BOUNDS_MS, 0.99),
      last_hour: quantile(hour.rest, REST_BOUNDS_MS, 0.99),
    },
  };
}

/** The state of each component and source now: what the incidents follow and the report shows. */
export interface Assessment {
  causes: Record<ComponentId, StatusCause | null>;
  sources: SourceStatus[];
}

export function assess(input: Pick<ReportInput, 'samples' | 'sources' | 'startedAt'>, now: number): Assessment {
  return {
    causes: componentCauses(liveState(input.samples, now)),
    sources: input.sources.map((s) => sourceStatus(s, now, input.startedAt)),
  };
}

/** Each component and source that is degraded now, by its incident component key, with its cause and start. */
export function degradedNow(
  { causes, sources }: Assessment,
  now: number,
): Map<string, { cause: StatusCause; since: number }> {
  const out = new Map<string, { cause: StatusCause; since: number }>();
  for (const [id, cause] of Object.entries(causes)) if (cause) out.set(id, { cause, since: now });
  // An overdue poll opens no incident until the poll fails: a slow source would open and close one at every poll.
  for (const s of sources)
    if (s.state === 'degraded' && s.cause && s.cause !== 'source_overdue')
      out.set(`source:${s.name}`, { cause: s.cause, since: s.failing_since ? Date.parse(s.failing_since) : now });
  return out;
}

export interface ReportInput {
  sources: readonly SourceRecord[];
  /** The last hour's samples of every instance. */
  samples: readonly StoredSample[];
  /** Minutes some instance ran, by UTC day (epoch days). */
  recorded: ReadonlyMap<number, number>;
  /** Incidents open now or ended in the last 90 days, newest first. */
  incidents: readonly IncidentRecord[];
  /** When the building instance started (a source's poll is overdue from then at the earliest). */
  startedAt?: number;
}

/** The contract's bound on the incidents listed (the history still counts every one). */
const MAX_INCIDENTS = 1000;

/** An incident as the contract shows it (`inc_` and its number; times in ISO 8601). */
export function incidentJson(i: IncidentRecord): StatusReport['incidents'][number] {
  return {
    id: `inc_${i.id}`,
    component: i.component,
    kind: i.kind,
    cause: i.cause,
    message: i.message,
    started_at: iso(i.startedAt),
    ended_at: i.endedAt === null ? null : iso(i.endedAt),
  };
}

/** The report of `now`; `state` when the caller has assessed it already (the incidents follow it). */
export function buildReport(input: ReportInput, now: number, state: Assessment = assess(input, now)): StatusReport {
  const { causes, sources } = state;
  const automatic = (key: string) => input.incidents.filter((i) => i.kind === 'automatic' && i.component === key);
  const ids = Object.keys(COMPONENT_NAMES) as ComponentId[];
  return {
    state: overallState(causes, sources),
    generated_at: iso(now),
    components: ids.map((id) => ({
      id,
      name: COMPONENT_NAMES[id],
      state: causes[id] ? 'degraded' : 'operational',
      cause: causes[id],
    })),
    sources,
    figures: figures(input.samples, now),
    history: [
      ...ids.map((id) => ({
        component: id,
        name: COMPONENT_NAMES[id],
        ...historyDays(input.recorded, automatic(id), now),
      })),
      ...sources.map((s) => ({
        component: `source:${s.name}`,
        name: s.name,
        ...historyDays(input.recorded, automatic(`source:${s.name}`), now),
      })),
    ],
    incidents: input.incidents.slice(0, MAX_INCIDENTS).map(incidentJson),
  };
}
