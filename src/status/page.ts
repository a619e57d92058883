/**
 * The public status page (`/status`): the `/v1/status` report as one self-contained HTML5 document. Pure (no
 * clock, no I/O); inline style, no script, no external resource, the only link `/v1/status`; it reloads itself
 * by `<meta http-equiv="refresh">`. Public: the report's content only (no host, URL or token), every value
 * HTML-escaped since operators write names and notes. Accessible: states are words (colour repeats them),
 * captioned tables, history bars with date and share as text, text ≥ 4.5:1 in both themes.
 */
import type { components } from '../../generated/openapi.js';

type Schemas = components['schemas'];
type StatusReport = Schemas['StatusReport'];
type StatusCause = Schemas['StatusCause'];
type SourceStatus = Schemas['SourceStatus'];
type StatusHistory = Schemas['StatusHistory'];
type StatusIncident = Schemas['StatusIncident'];

export interface StatusPageOptions {
  /** Seconds between the page's own reloads: an integer ≥ 1. */
  refreshSeconds: number;
}

/** Shown for every null figure, day or time: the report has no value for it. */
const NO_DATA = 'no data';

/** The complete HTML document for `report`; throws a RangeError for a refresh period that is not an integer ≥ 1. */
export function renderStatusPage(report: StatusReport, options: StatusPageOptions): string {
  const refresh = options.refreshSeconds;
  if (!Number.isInteger(refresh) || refresh < 1) {
    throw new RangeError(`refreshSeconds must be an integer >= 1, got ${String(refresh)}`);
  }
  const title = `Financial News Service status: ${stateLabel(report.state)}`;
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    `<meta http-equiv="refresh" content="${refresh}">`,
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    '<h1>Financial News Service status</h1>',
    banner(report.state),
    componentsSection(report),
    sourcesSection(report.sources),
    figuresSection(report.figures),
    historySection(report),
    incidentsSection(report),
    '</main>',
    footer(report.generated_at, refresh),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** `text` safe as HTML text and as a double- or single-quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The CSS class of each known state; an unknown state (a newer contract) gets the neutral one. */
const STATE_CLASS: Record<string, string> = {
  operational: 'ok',
  degraded: 'warn',
  outage: 'bad',
  paused: 'muted',
};

const STATE_SENTENCE: Record<string, string> = {
  operational: 'All is well: the news is flowing.',
  degraded: 'Some news is not flowing, or is late.',
  outage: 'No news is flowing.',
};

/** Every cause of the contract in words; the Record type makes a new enum value a compile error here. */
const CAUSE_TEXT: Record<StatusCause, string> = {
  database_unavailable: 'Database not available',
  server_errors: 'Server errors above 1% of answers',
  slow_delivery: 'Slow delivery on the stream',
  index_loading: 'Search index loading',
  embedder_unavailable: 'Search embedder not available',
  source_unreachable: 'Source not answering',
  source_error_status: 'Source answering with an error',
  source_unreadable: 'Source not sending a readable feed',
  source_overdue: 'Source not answering in time',
  operator_note: 'Note from the operators',
};

/** The state word, capitalised ("Degraded"); an unknown state is shown as it came. */
function stateLabel(state: string): string {
  return state.charAt(0).toUpperCase() + state.slice(1);
}

/** The state word in a coloured badge; the word is always there, the colour only repeats it. */
function stateBadge(state: string): string {
  return `<span class="st ${STATE_CLASS[state] ?? 'muted'}">${escapeHtml(state)}</span>`;
}

function causeText(cause: string | null): string {
  if (cause === null) return 'none';
  return escapeHtml(CAUSE_TEXT[cause as StatusCause] ?? cause);
}

/** A report component id in words: a source's name, a component's display name, or the whole service. */
function componentLabel(id: string, report: StatusReport): string {
  if (id === 'service') return 'Whole service';
  if (id.startsWith('source:')) return `${id.slice('source:'.length)} (source)`;
  return report.components.find((c) => c.id === id)?.name ?? id;
}

function banner(state: string): string {
  const sentence = STATE_SENTENCE[state] ?? '';
  return (
    `<p class="banner ${STATE_CLASS[state] ?? 'muted'}">` +
    `<strong>${escapeHtml(stateLabel(state))}</strong> ${escapeHtml(sentence)}</p>`
  );
}

/** A titled section; `id`, `heading` and `body` are markup built here (constants or escaped values). */
function section(id: string, heading: string, body: string): string {
  return `<section aria-labelledby="${id}">\n<h2 id="${id}">${heading}</h2>\n${body}\n</section>`;
}

/** A table with a caption and column headers; `caption` and `headers` are constants, `rows` built markup. */
function table(caption: string, headers: string[], rows: string[]): string {
  const head = headers.map((h) => `<th scope="col">${h}</th>`).join('');
  return `<table>\n<caption>${caption}</caption>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${rows.join('\n')}\n</tbody>\n</table>`;
}

function componentsSection(report: StatusReport): string {
  if (report.components.length === 0) return section('components', 'Components', '<p>No components.</p>');
  const rows = report.components.map(
    (c) =>
      `<tr><th scope="row">${escapeHtml(c.name)}</th><td>${stateBadge(c.state)}</td><td>${causeText(c.cause)}</td></tr>`,
  );
  const body = table('The service’s components and their state', ['Component', 'State', 'Cause'], rows);
  return section('components', 'Components', body);
}

function sourcesSection(sources: SourceStatus[]): string {
  if (sources.length === 0) return section('sources', 'Sources', '<p>No sources.</p>');
  const headers = ['Source', 'State', 'Cause', 'Last article', 'Last poll ok', 'Failing since', 'Poll interval'];
  const rows = sources.map(
    (s) =>
      `<tr><th scope="row">${escapeHtml(s.name)}</th><td>${stateBadge(s.state)}</td><td>${causeText(s.cause)}</td>` +
      `<td>${timeOr(s.last_article_at, NO_DATA)}</td><td>${timeOr(s.last_poll_ok_at, NO_DATA)}</td>` +
      `<td>${timeOr(s.failing_since, 'not failing')}</td><td>${pollInterval(s.poll_interval_seconds)}</td></tr>`,
  );
  return section('sources', 'Sources', table('News sources by public name (times in UTC)', headers, rows));
}

function figuresSection(figures: StatusReport['figures']): string {
  const delay = figures.stream_delay_ms;
  const row = (label: string, last5m: string, lastHour: string) =>
    `<tr><th scope="row">${label}</th><td>${last5m}</td><td>${lastHour}</td></tr>`;
  const rows = [
    row('Stream delay, median (p50)', ms(delay.last_5m.p50), ms(delay.last_hour.p50)),
    row('Stream delay, 99th percentile (p99)', ms(delay.last_5m.p99), ms(delay.last_hour.p99)),
    row(
      'New articles',
      perMinute(figures.articles_per_minute.last_5m),
      perMinute(figures.articles_per_minute.last_hour),
    ),
    row(
      'REST response time, 99th percentile (p99)',
      ms(figures.rest_p99_ms.last_5m),
      ms(figures.rest_p99_ms.last_hour),
    ),
  ];
  const caption =
    'Figures of the last 5 minutes and the last hour (stream delay: from an article’s receipt to its delivery)';
  return section('figures', 'Live figures', table(caption, ['Figure', 'Last 5 minutes', 'Last hour'], rows));
}

function historySection(report: StatusReport): string {
  const legend =
    '<p class="legend">Each bar is one UTC day, oldest first: <i class="bar a"></i> at least 99.9% operational, ' +
    '<i class="bar b"></i> at least 99%, <i class="bar c"></i> below 99%, <i class="bar n"></i> no data.</p>';
  const rows = report.history.map((h, i) => historyRow(h, i, report));
  const body = rows.length === 0 ? '<p>No history yet.</p>' : [legend, ...rows].join('\n');
  return section('history', 'History (90 days)', body);
}

/** One component's days as bars: one `<li>` per day, its colour class and its date and share as hidden text. */
function historyRow(h: StatusHistory, index: number, report: StatusReport): string {
  const id = `h${index}`;
  const dates = h.operational.map((_, i) => dayAfter(h.first_day, i));
  const bars = h.operational
    .map((share, i) => `<li class="${barClass(share)}"><span>${dayText(dates[i]!, share)}</span></li>`)
    .join('');
  const first = dates[0];
  const last = dates[dates.length - 1];
  const range =
    first !== undefined && last !== undefined
      ? `<p class="range" aria-hidden="true"><span>${escapeHtml(first)}</span><span>${escapeHtml(last)}</span></p>`
      : '';
  return (
    `<div class="hist"><h3 id="${id}">${escapeHtml(componentLabel(h.component, report))}</h3>` +
    `<ol class="bars" aria-labelledby="${id}">${bars}</ol>${range}</div>`
  );
}

/** The UTC date `days` after `date` (YYYY-MM-DD). */
function dayAfter(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function dayText(date: string, share: number | null): string {
  const value = share === null || !Number.isFinite(share) ? NO_DATA : `${percent(share)} operational`;
  return `${escapeHtml(date)}: ${value}`;
}

/** a: ≥ 99.9% operational; b: ≥ 99%; c: below; n: no data (the legend says the same in words). */
function barClass(share: number | null): string {
  if (share === null || !Number.isFinite(share)) return 'n';
  if (share >= 0.999) return 'a';
  return share >= 0.99 ? 'b' : 'c';
}

function incidentsSection(report: StatusReport): string {
  if (report.incidents.length === 0) {
    return section('incidents', 'Incidents', '<p>No incidents in the last 90 days.</p>');
  }
  // Open incidents first, then ended ones; each group keeps the report's order (newest first).
  const open = report.incidents.filter((i) => i.ended_at === null);
  const ended = report.incidents.filter((i) => i.ended_at !== null);
  const items = [...open, ...ended].map((i) => incidentItem(i, report));
  return section('incidents', 'Incidents', `<ul class="incidents">\n${items.join('\n')}\n</ul>`);
}

function incidentItem(incident: StatusIncident, report: StatusReport): string {
  const what = `${componentLabel(incident.component, report)}: ${CAUSE_TEXT[incident.cause] ?? incident.cause}`;
  const status =
    incident.ended_at === null ? '<span class="st warn">ongoing</span>' : '<span class="st ok">ended</span>';
  const note = incident.message === null ? '' : `<p class="note">${escapeHtml(incident.message)}</p>`;
  const ended = incident.ended_at === null ? 'ongoing' : `ended ${time(incident.ended_at)}`;
  return (
    `<li><h3>${escapeHtml(what)} ${status}</h3>${note}` +
    `<p class="when">Started ${time(incident.started_at)}, ${ended}</p></li>`
  );
}

function footer(generatedAt: string, refresh: number): string {
  return (
    `<footer><p>Generated ${time(generatedAt, true)} · refreshes every ${refresh} s · ` +
    'JSON: <a href="/v1/status">/v1/status</a></p></footer>'
  );
}

/** A `<time>` in UTC ("2026-11-27 09:22 UTC", with seconds when asked); an unparsable value as escaped text. */
function time(iso: string, seconds = false): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return escapeHtml(iso);
  const text = `${date
    .toISOString()
    .slice(0, seconds ? 19 : 16)
    .replace('T', ' ')} UTC`;
  return `<time datetime="${date.toISOString()}">${text}</time>`;
}

function timeOr(iso: string | null, missing: string): string {
  return iso === null ? missing : time(iso);
}

/** "every 30 s", "every 5 min", "every 2 h": the largest unit that divides the interval. */
function pollInterval(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `every ${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `every ${seconds / 60} min`;
  return `every ${seconds} s`;
}

function ms(value: number | null): string {
  return value === null || !Number.isFinite(value) ? NO_DATA : `${number(value)} ms`;
}

function perMinute(value: number | null): string {
  return value === null || !Number.isFinite(value) ? NO_DATA : `${number(value)} per minute`;
}

/** At most one decimal, thousands grouped, the same in every locale ("12,345.6"). */
function number(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 1 });
}

/** A share as a percentage rounded down to two decimals, so only a full day reads "100%". */
function percent(share: number): string {
  if (share >= 1) return '100%';
  if (share <= 0) return '0%';
  const hundredths = Math.floor(share * 10000 + 1e-9) / 100;
  return `${Number(hundredths.toFixed(2))}%`;
}

/** Both themes: text ≥ 4.5:1 on `bg` (ok/warn/bad on their banners too), bars ≥ 3:1 (test/status checks both). */
export const PALETTE = {
  light: {
    bg: '#ffffff',
    fg: '#1b1f24',
    muted: '#57606a',
    border: '#d0d7de',
    link: '#0550ae',
    ok: '#116329',
    okBg: '#dafbe1',
    warn: '#7d4e00',
    warnBg: '#fff8c5',
    bad: '#a40e26',
    badBg: '#ffebe9',
    barA: '#1a7f37',
    barB: '#9a6700',
    barC: '#cf222e',
    barN: '#6e7781',
  },
  dark: {
    bg: '#0d1117',
    fg: '#e6edf3',
    muted: '#9da7b3',
    border: '#30363d',
    link: '#58a6ff',
    ok: '#56d364',
    okBg: '#0f2d1a',
    warn: '#e3b341',
    warnBg: '#2e2208',
    bad: '#ff8182',
    badBg: '#3c1618',
    barA: '#2ea043',
    barB: '#bb8009',
    barC: '#f85149',
    barN: '#6e7681',
  },
} as const;

function cssVariables(colours: Record<string, string>): string {
  return Object.entries(colours)
    .map(([name, value]) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}:${value}`)
    .join(';');
}

const STYLE = [
  `:root{${cssVariables(PALETTE.light)}}`,
  `@media (prefers-color-scheme: dark){:root{${cssVariables(PALETTE.dark)}}}`,
  'body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}',
  'main,footer{max-width:60rem;margin:0 auto;padding:0 1rem}',
  'h1{font-size:1.6rem;margin:1.5rem 0 1rem}h2{font-size:1.25rem;margin:2rem 0 .5rem}h3{font-size:1rem;margin:0}',
  'a{color:var(--link)}',
  '.banner{font-size:1.2rem;padding:1rem;border-radius:6px;border:2px solid currentColor;margin:0}',
  '.banner.ok{color:var(--ok);background:var(--ok-bg)}.banner.warn{color:var(--warn);background:var(--warn-bg)}',
  '.banner.bad{color:var(--bad);background:var(--bad-bg)}.banner.muted{color:var(--fg);background:var(--bg)}',
  'table{border-collapse:collapse;width:100%}',
  'caption{text-align:left;color:var(--muted);padding:.25rem 0}',
  'th,td{text-align:left;padding:.35rem .75rem .35rem 0;border-bottom:1px solid var(--border);vertical-align:top}',
  '.st{font-weight:600}.st.ok{color:var(--ok)}.st.warn{color:var(--warn)}.st.bad{color:var(--bad)}',
  '.st.muted{color:var(--muted)}',
  '.legend,.range,.when,caption{font-size:.875rem}.legend,.when{color:var(--muted)}',
  '.bar{display:inline-block;width:.6rem;height:.9rem;vertical-align:middle;border-radius:1px}',
  '.hist{margin:1rem 0}',
  '.bars{display:flex;justify-content:flex-end;gap:1px;list-style:none;margin:.25rem 0 0;padding:0;height:2rem;position:relative}',
  '.bars li{flex:0 0 calc((100% - 89px)/90);border-radius:1px}',
  '.a{background:var(--bar-a)}.b{background:var(--bar-b)}.c{background:var(--bar-c)}.n{background:var(--bar-n)}',
  '.bars span{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}',
  '.bars li:hover{outline:2px solid var(--fg)}',
  '.bars li:hover span{clip:auto;width:auto;height:auto;overflow:visible;top:2.25rem;left:0;z-index:1;',
  'padding:.1rem .4rem;background:var(--bg);color:var(--fg);border:1px solid var(--border);font-size:.875rem}',
  '.range{display:flex;justify-content:space-between;color:var(--muted);margin:0}',
  '.incidents{list-style:none;padding:0}.incidents li{padding:.75rem 0;border-bottom:1px solid var(--border)}',
  '.note{margin:.25rem 0;white-space:pre-wrap}.when{margin:.25rem 0 0}',
  'footer{color:var(--muted);font-size:.875rem;padding:2rem 1rem}',
].join('\n');
