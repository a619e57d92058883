/** The public status page (src/status/page.ts): one self-contained, escaped, accessible HTML document. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { components } from '../../generated/openapi.js';
import { escapeHtml, PALETTE, renderStatusPage } from '../../src/status/page.js';

type StatusReport = components['schemas']['StatusReport'];
type StatusHistory = components['schemas']['StatusHistory'];

const spec = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'generated', 'openapi.json'), 'utf8'));

/** A fresh copy of one of the contract's examples of the report. */
function example(name: 'StatusOperational' | 'StatusSourceFailing'): StatusReport {
  return structuredClone(spec.components.examples[name].value) as StatusReport;
}

const render = (report: StatusReport, refreshSeconds = 30) => renderStatusPage(report, { refreshSeconds });

/** 90 consecutive UTC days ending on 2026-11-27, oldest first, each with `share(i)`. */
function days(share: (i: number) => number | null): Pick<StatusHistory, 'first_day' | 'operational'> {
  return { first_day: '2026-08-30', operational: Array.from({ length: 90 }, (_, i) => share(i)) };
}

/** The operational example with 4 components and `sources` sources, each with 90 days of history. */
function largeReport(sources: number): StatusReport {
  const report = example('StatusOperational');
  const template = report.sources[0]!;
  report.sources = Array.from({ length: sources }, (_, i) => ({ ...template, name: `Regional Business Wire ${i}` }));
  const history = days((i) => (i < 5 ? null : i % 9 === 0 ? 0.98765 : i % 4 === 0 ? 0.99931 : 1));
  report.history = [
    ...report.components.map((c) => ({ component: c.id, name: c.name, ...history })),
    ...report.sources.map((s) => ({ component: `source:${s.name}`, name: s.name, ...history })),
  ];
  return report;
}

const bodyOf = (html: string) => html.slice(html.indexOf('<body>'));
const textOf = (fragment: string) => fragment.replace(/<[^>]*>/g, '');

describe('the page is self-contained', () => {
  for (const name of ['StatusOperational', 'StatusSourceFailing'] as const) {
    it(`loads nothing and runs nothing (${name})`, () => {
      const html = render(example(name));
      expect(html.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
      expect(html).not.toMatch(/<script/i);
      expect(html).not.toMatch(/<link/i);
      expect(html).not.toMatch(/https?:/i);
      expect(html).not.toMatch(/\bsrc=/i);
      expect(html).not.toMatch(/url\(|@import/i);
      expect(html).not.toMatch(/(?:src|href)="\/\//i);
      expect(html.match(/<style>/g)).toHaveLength(1);
    });

    it(`links only to /v1/status (${name})`, () => {
      const hrefs = [...render(example(name)).matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
      expect(hrefs).toEqual(['/v1/status']);
    });
  }
});

describe('headings and tables give the page its structure', () => {
  it('has one h1 and an h2 per section, in order', () => {
    const html = render(example('StatusSourceFailing'));
    expect(html.match(/<h1[ >]/g)).toHaveLength(1);
    expect(html).toContain('<h1>Financial News Service status</h1>');
    const h2s = [...html.matchAll(/<h2[^>]*>([^<]*)<\/h2>/g)].map((m) => m[1]);
    expect(h2s).toEqual(['Components', 'Sources', 'Live figures', 'History (90 days)', 'Incidents']);
  });

  it('gives every table a caption and scoped header cells', () => {
    const html = render(example('StatusSourceFailing'));
    const tables = html.match(/<table>[\s\S]*?<\/table>/g) ?? [];
    expect(tables).toHaveLength(3);
    for (const table of tables) {
      expect(table).toMatch(/^<table>\n<caption>[^<]+<\/caption>/);
      expect(table).not.toMatch(/<th(?! scope="(?:col|row)")[ >]/);
    }
  });
});

describe('the state is told in words', () => {
  it('shows "operational" in the banner and for each component of the operational report', () => {
    const html = render(example('StatusOperational'));
    expect(html).toMatch(/<p class="banner ok"><strong>Operational<\/strong>/);
    expect(html.match(/<span class="st ok">operational<\/span>/g)).toHaveLength(5); // 4 components + 1 source
  });

  it('shows "degraded" in the banner and on the failing source, with its cause in words', () => {
    const html = render(example('StatusSourceFailing'));
    expect(html).toMatch(/<p class="banner warn"><strong>Degraded<\/strong>/);
    const row = html.match(/<tr><th scope="row">Market Wire<\/th>.*<\/tr>/)?.[0] ?? '';
    expect(textOf(row)).toContain('degraded');
    expect(textOf(row)).toContain('Source not answering');
  });

  it('shows "outage" and "paused" as words too', () => {
    const report = example('StatusSourceFailing');
    report.state = 'outage';
    report.sources[0]!.state = 'paused';
    const html = render(report);
    expect(html).toMatch(/<p class="banner bad"><strong>Outage<\/strong>/);
    expect(html).toContain('<span class="st muted">paused</span>');
  });
});

describe('operator text is escaped', () => {
  it('renders a note with a script tag as text', () => {
    const report = example('StatusSourceFailing');
    report.incidents[0]!.message = '<script>alert(1)</script>';
    const html = render(report);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toMatch(/<script/i);
  });

  it('escapes source, component and history names wherever they appear', () => {
    const report = example('StatusSourceFailing');
    const evil = `"><img src=x onerror=alert(1)> & 'q'`;
    report.sources[0]!.name = evil;
    report.components[0]!.name = evil;
    report.history[0]!.component = `source:${evil}`;
    report.incidents[1]!.component = `source:${evil}`;
    report.incidents.push({ ...report.incidents[1]!, id: 'inc_15', component: 'rest' });
    const html = render(report);
    expect(html).not.toContain('<img');
    expect(html).not.toContain(evil);
    const escaped = '&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &#39;q&#39;';
    expect(html.split(escaped).length - 1).toBe(5); // source row, component row, history row, 2 incidents
  });

  it('escapeHtml replaces the five characters that matter in text and attributes', () => {
    expect(escapeHtml(`<a href="x">&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;');
    expect(escapeHtml('Market Wire')).toBe('Market Wire');
  });
});

describe('each history bar has a text alternative naming its date and share', () => {
  it('gives every day one bar with its date and percentage, "no data" for a null day', () => {
    const report = example('StatusOperational');
    const html = render(report);
    const bars = [...html.matchAll(/<li class="([abcn])"><span>([^<]*)<\/span><\/li>/g)];
    expect(bars).toHaveLength(90);
    expect(bars[0]!.slice(1)).toEqual(['n', '2026-08-30: no data']);
    expect(bars.slice(-3).map((m) => [m[1], m[2]])).toEqual([
      ['n', '2026-11-25: no data'],
      ['a', '2026-11-26: 99.93% operational'],
      ['a', '2026-11-27: 100% operational'],
    ]);
    expect(html).toMatch(/<h3 id="h0">REST API<\/h3><ol class="bars" aria-labelledby="h0">/);
  });

  it('rounds a share down, so only a full day reads 100%, and colours by threshold', () => {
    const report = example('StatusOperational');
    report.history[0]!.operational.splice(86, 4, 0.99999, 0.995, 0.5, 0);
    const bars = [...render(report).matchAll(/<li class="([abcn])"><span>([^<]*)<\/span>/g)];
    expect(bars.slice(86, 90).map((m) => [m[1], m[2]])).toEqual([
      ['a', '2026-11-24: 99.99% operational'],
      ['b', '2026-11-25: 99.5% operational'],
      ['c', '2026-11-26: 50% operational'],
      ['c', '2026-11-27: 0% operational'],
    ]);
  });

  it('names a source row "Name (source)" and keeps 90 bars for 90 days', () => {
    const html = render(largeReport(1));
    const rows = html.match(/<div class="hist">.*?<\/div>/g) ?? [];
    expect(rows).toHaveLength(5);
    expect(rows[4]).toContain('<h3 id="h4">Regional Business Wire 0 (source)</h3>');
    for (const row of rows)
      expect(row.match(/<li class="[abcn]"><span>\d{4}-\d\d-\d\d: [^<]+<\/span><\/li>/g)).toHaveLength(90);
  });
});

describe('null figures render "no data"', () => {
  it('shows "no data" for each null percentile and REST figure, units for the others', () => {
    const report = example('StatusSourceFailing');
    report.figures.rest_p99_ms = { last_5m: null, last_hour: 1234.56 };
    const figures = bodyOf(render(report)).match(/<section aria-labelledby="figures">[\s\S]*?<\/section>/)?.[0] ?? '';
    const cells = [...figures.matchAll(/<td>([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(cells).toEqual([
      'no data',
      '10 ms',
      'no data',
      '100 ms',
      '0 per minute',
      '2.5 per minute',
      'no data',
      '1,234.6 ms',
    ]);
  });
});

describe('sources show their times and poll interval', () => {
  it('shows times in UTC, "not failing" and "no data" for null times, the interval in its unit', () => {
    const report = example('StatusSourceFailing');
    const base = report.sources[0]!;
    report.sources.push({
      ...base,
      name: 'Quiet',
      last_article_at: null,
      failing_since: null,
      poll_interval_seconds: 300,
    });
    report.sources.push({ ...base, name: 'Hourly', poll_interval_seconds: 7200 });
    const html = render(report);
    const row = (name: string) => textOf(html.match(new RegExp(`<tr><th scope="row">${name}</th>.*</tr>`))?.[0] ?? '');
    expect(row('Market Wire')).toBe(
      'Market WiredegradedSource not answering2026-11-27 09:21 UTC2026-11-27 09:22 UTC2026-11-27 09:22 UTCevery 30 s',
    );
    expect(row('Quiet')).toMatch(/no data2026-11-27 09:22 UTCnot failingevery 5 min$/);
    expect(row('Hourly')).toMatch(/every 2 h$/);
    expect(html).toContain('<time datetime="2026-11-27T09:22:31.000Z">2026-11-27 09:22 UTC</time>');
  });
});

describe('incidents are listed open first, in words', () => {
  it('puts open incidents before ended ones, names the component and says "ongoing"', () => {
    const report = example('StatusSourceFailing');
    const ended = { ...example('StatusOperational').incidents[0]!, component: 'search' };
    report.incidents = [ended, ...report.incidents];
    const items = bodyOf(render(report)).match(/<li><h3>.*<\/li>/g) ?? [];
    expect(items.map(textOf)).toEqual([
      'Whole service: Note from the operators ongoing' +
        'Market Wire is down on their side; we are in touch with them.Started 2026-11-27 09:25 UTC, ongoing',
      'Market Wire (source): Source not answering ongoingStarted 2026-11-27 09:22 UTC, ongoing',
      'Search: Source answering with an error endedStarted 2026-11-26 14:02 UTC, ended 2026-11-26 14:03 UTC',
    ]);
  });

  it('tells every cause of the contract in words, never by its enum value', () => {
    const causes: string[] = spec.components.schemas.StatusCause.enum;
    const report = example('StatusSourceFailing');
    const template = report.incidents[1]!;
    report.incidents = causes.map((cause, i) => ({ ...template, id: `inc_${i}`, cause }) as typeof template);
    report.sources[0]!.cause = null;
    const body = bodyOf(render(report));
    for (const cause of causes) expect(body).not.toContain(cause);
    expect(body.match(/<li><h3>/g)).toHaveLength(causes.length);
  });

  it('says so when there is none', () => {
    const report = example('StatusOperational');
    report.incidents = [];
    expect(render(report)).toContain('<p>No incidents in the last 90 days.</p>');
  });
});

describe('the page refreshes itself', () => {
  it('has a meta refresh of N seconds and says so in the footer, with the generation time', () => {
    const html = render(example('StatusOperational'), 17);
    expect(html).toContain('<meta http-equiv="refresh" content="17">');
    expect(textOf(html.match(/<footer>.*<\/footer>/)?.[0] ?? '')).toBe(
      'Generated 2026-11-27 09:30:05 UTC · refreshes every 17 s · JSON: /v1/status',
    );
  });

  it('refuses a refresh period that is not a positive integer', () => {
    for (const refreshSeconds of [0, -5, 1.5, Number.NaN]) {
      expect(() => render(example('StatusOperational'), refreshSeconds)).toThrow(RangeError);
    }
  });
});

describe('light and dark themes both keep their contrast', () => {
  it('switches colours with a prefers-color-scheme: dark media query', () => {
    const html = render(example('StatusOperational'));
    expect(html).toMatch(/@media \(prefers-color-scheme: dark\)\{:root\{--bg:#0d1117;/);
    expect(html).toContain('<meta name="color-scheme" content="light dark">');
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`keeps text at ≥ 4.5:1 and bars at ≥ 3:1 (${theme})`, () => {
      const c = PALETTE[theme];
      for (const text of [c.fg, c.muted, c.link, c.ok, c.warn, c.bad])
        expect(contrast(text, c.bg)).toBeGreaterThanOrEqual(4.5);
      for (const [text, bg] of [
        [c.ok, c.okBg],
        [c.warn, c.warnBg],
        [c.bad, c.badBg],
      ]) {
        expect(contrast(text!, bg!)).toBeGreaterThanOrEqual(4.5);
      }
      for (const bar of [c.barA, c.barB, c.barC, c.barN]) expect(contrast(bar, c.bg)).toBeGreaterThanOrEqual(3);
    });
  }
});

describe('the page stays small', () => {
  it('stays under 1 MB with 4 components and 50 sources of 90 days each', () => {
    const report = largeReport(50);
    expect(report.history).toHaveLength(54);
    const html = render(report);
    expect(html.match(/<li class="[abcn]">/g)).toHaveLength(54 * 90);
    expect(Buffer.byteLength(html)).toBeLessThan(1_000_000);
  });
});

/** The WCAG 2 contrast ratio of two `#rrggbb` colours. */
function contrast(a: string, b: string): number {
  const [la, lb] = [luminance(a), luminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

function luminance(hex: string): number {
  const channel = (i: number) => {
    const v = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}
