/**
 * One instance's status board: it stores its figures every few seconds; the instance that claims the stale report's
 * turn syncs incidents and publishes; all serve the last report from memory, so a request never queries the store.
 */
import { randomUUID } from 'node:crypto';
import { errorText, type Log } from '../domain/log.js';
import type { Metrics } from '../ops/metrics.js';
import type { IncidentRecord, SourceStore, StatusStore } from '../store/ports/index.js';
import { isStoreUnavailable } from '../store/ports/errors.js';
import { renderStatusPage } from './page.js';
import { assess, buildReport, degradedNow, type StoredSample } from './report.js';
import {
  COMPONENT_NAMES,
  DAY_MS,
  dayOf,
  HISTORY_DAYS,
  INDEX_LOAD_GRACE_MS,
  iso,
  minuteOf,
  PAGE_REFRESH_SECONDS,
  type StatusReport,
} from './rules.js';
import { MinuteSampler, parseSample, type InstanceState } from './sample.js';

export interface StatusBoardDeps {
  status: StatusStore;
  sources: Pick<SourceStore, 'list'>;
  metrics: Pick<Metrics, 'registry'>;
  /** What the instance knows now (the change feed's position, failing dependencies, the search index). */
  instanceState: () => Promise<InstanceState>;
  clock: () => number;
  log: Log;
  /** How old the published report may get before an instance builds the next (default 5 s). */
  refreshMs?: number;
  /** How often the instance looks at the stored report (default 1 s). */
  tickMs?: number;
}

/** Samples are kept for the last hour's figures, and a little more. */
const SAMPLES_KEPT_MS = 2 * 3_600_000;
const PRUNE_EVERY_MS = 3_600_000;

/** While the database fails: every component in outage, the rest as the last report read said. */
function databaseOutage(last: StatusReport | undefined, now: number): StatusReport {
  const ids = Object.keys(COMPONENT_NAMES) as (keyof typeof COMPONENT_NAMES)[];
  return {
    sources: [],
    figures: {
      stream_delay_ms: { last_5m: { p50: null, p99: null }, last_hour: { p50: null, p99: null } },
      articles_per_minute: { last_5m: 0, last_hour: 0 },
      rest_p99_ms: { last_5m: null, last_hour: null },
    },
    history: [],
    incidents: [],
    ...last,
    state: 'outage',
    generated_at: iso(now),
    components: ids.map((id) => ({ id, name: COMPONENT_NAMES[id], state: 'degraded', cause: 'database_unavailable' })),
  };
}

export class StatusBoard {
  private readonly instance = randomUUID();
  private readonly startedAt: number;
  private readonly sampler: MinuteSampler;
  private readonly refreshMs: number;
  private body: string | undefined;
  /** The last report read from the store (the base of a database outage's report). */
  private lastRead: string | undefined;
  private page: { body: string; html: string } | undefined;
  private lastSampleAt = -Infinity;
  private lastPruneAt = -Infinity;
  private failing = false;
  /** When this instance first failed to reach the database in the current outage (none can be stored meanwhile). */
  private outageSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: StatusBoardDeps) {
    this.sampler = new MinuteSampler(deps.metrics);
    this.refreshMs = deps.refreshMs ?? 5_000;
    this.startedAt = deps.clock();
  }

  /** Takes the first turn (so the report is there when the service answers), then one every tick. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.deps.tickMs ?? 1_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** The report as JSON text (GET /v1/status). */
  json(): string {
    return this.body ?? JSON.stringify(databaseOutage(undefined, this.deps.clock()));
  }

  /** The report as a web page (GET /status), rendered once per report. */
  html(): string {
    const body = this.json();
    if (this.page?.body !== body)
      this.page = {
        body,
        html: renderStatusPage(JSON.parse(body), { refreshSeconds: PAGE_REFRESH_SECONDS }),
      };
    return this.page.html;
  }

  /**
   * One turn; never two at once, never throws. A database failure serves an outage at once; another error (SQLite's
   * write lock held elsewhere a moment) keeps the last report. Logged once per failing spell.
   */
  tick(): Promise<void> {
    this.running ??= this.turn()
      .then(() => {
        if (this.failing) this.deps.log.info({}, 'status report refreshed again');
        this.failing = false;
      })
      .catch((e) => {
        const down = isStoreUnavailable(e);
        if (down) this.outageSince ??= this.deps.clock();
        if (!this.failing) this.deps.log.warn({ err: errorText(e), outage: down }, 'status report not refreshed');
        this.failing = true;
        if (down || this.body === undefined)
          this.body = JSON.stringify(databaseOutage(this.lastReport(), this.deps.clock()));
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async turn(): Promise<void> {
    const { status } = this.deps;
    const now = this.deps.clock();
    if (now - this.lastSampleAt >= this.refreshMs) {
      const minute = minuteOf(now);
      const state = await this.deps.instanceState();
      // An index loading at start is expected (search answers 503 + Retry-After): it counts after the grace.
      const indexLoading = state.indexLoading && now - this.startedAt > INDEX_LOAD_GRACE_MS;
      const sample = await this.sampler.read(minute, now, { ...state, indexLoading });
      await status.putSample(this.instance, minute, JSON.stringify(sample));
      await status.markMinute(minute);
      this.lastSampleAt = now;
    }
    const stored = await status.report();
    if (stored && now - stored.generatedAt < this.refreshMs) {
      this.body = this.lastRead = stored.body;
      return;
    }
    // Claim the turn first (compare-and-set on the stored report's time): only the claimer syncs incidents and builds.
    if (stored && !(await status.publish(stored.body, now, stored.generatedAt))) {
      this.body = this.lastRead = (await status.report())?.body ?? stored.body;
      return;
    }
    const body = JSON.stringify(await this.build(now));
    if (await status.publish(body, now, stored ? now : null)) this.body = this.lastRead = body;
    else this.body = this.lastRead = (await status.report())?.body ?? body;
    if (now - this.lastPruneAt >= PRUNE_EVERY_MS) {
      this.lastPruneAt = now;
      await status.prune(now - (HISTORY_DAYS + 1) * DAY_MS, now - SAMPLES_KEPT_MS);
    }
  }

  /** The last report read, if it reads as one (a row another version wrote may not). */
  private lastReport(): StatusReport | undefined {
    try {
      return this.lastRead === undefined ? undefined : (JSON.parse(this.lastRead) as StatusReport);
    } catch {
      return undefined;
    }
  }

  private async build(now: number): Promise<StatusReport> {
    const { status } = this.deps;
    const samples: StoredSample[] = [];
    for (const row of await status.samples(minuteOf(now) - 60)) {
      const sample = parseSample(row.sample);
      if (sample) samples.push({ instance: row.instance, minute: row.minute, sample });
    }
    const sources = await this.deps.sources.list();
    const since = now - HISTORY_DAYS * DAY_MS;
    let incidents = await status.incidents(since);
    const input = { sources, samples, startedAt: this.startedAt };
    const state = assess(input, now);
    const degraded = degradedNow(state, now);
    // The samples show a database outage only once the database is back: its incidents start when it was first seen.
    const outage = [...degraded.values()].filter((d) => d.cause === 'database_unavailable');
    for (const d of outage) d.since = Math.min(d.since, this.outageSince ?? d.since);
    if (outage.length === 0) this.outageSince = undefined;
    if (await this.syncIncidents(incidents, degraded, now)) incidents = await status.incidents(since);
    const recorded = new Map(
      (await status.minutesByDay(dayOf(now) - HISTORY_DAYS)).map(({ day, minutes }) => [day, minutes] as const),
    );
    return buildReport({ ...input, recorded, incidents }, now, state);
  }

  /** Opens an incident for what turned degraded, closes those that recovered; true when anything changed. */
  private async syncIncidents(
    incidents: readonly IncidentRecord[],
    degraded: ReadonlyMap<string, { cause: IncidentRecord['cause']; since: number }>,
    now: number,
  ): Promise<boolean> {
    const open = new Set(incidents.filter((i) => i.kind === 'automatic' && i.endedAt === null).map((i) => i.component));
    let changed = false;
    for (const [component, { cause, since }] of degraded)
      if (!open.has(component))
        changed = (await this.deps.status.open(component, cause, Math.min(since, now))) || changed;
    for (const component of open)
      if (!degraded.has(component)) changed = (await this.deps.status.close(component, now)) || changed;
    return changed;
  }
}
