/**
 * The prose agrees with the contract. Every statement in README.md, docs/*.md and the descriptions of
 * both specs that ties a number to a plan rule (a tier's rate or lookback, the grace window, the IP
 * guard, the rate window, a parameter's range, the echo cap, the stream's ping and re-check interval)
 * must say what x-plans / x-limits / x-stream / the schemas say. The extraction is generic (patterns
 * over statements that name a tier or the rule), not a list of line numbers, so a restructured README
 * is still checked. The plan table of openapi.yaml's info.description is left to descriptions.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { limits, operationParameters, plans, stream, tiers, type Tier } from '../../src/contract/index.js';
import { loadYaml, repoRoot } from '../support/specs.js';

const DAY_S = 24 * 3600;
const contract = {
  rateWindowSeconds: limits.rateWindowMs / 1000,
  graceWindowSeconds: limits.graceWindowMs / 1000,
  ipDistinctKeys: limits.ipGuard.distinctKeys,
  ipWindowSeconds: limits.ipGuard.windowMs / 1000,
  ipBlockSeconds: limits.ipGuard.blockMs / 1000,
  echoMaxChars: limits.echoMaxChars,
  requestHeadMaxBytes: limits.requestHeadMaxBytes,
  pingIntervalSeconds: stream.pingIntervalSeconds,
  recheckSeconds: stream.recheckSeconds,
  maxBufferedBytes: stream.maxBufferedBytes,
  connectionsPerAccount: stream.connectionsPerAccount,
};

/** Ranges by subject name: every query parameter and Article property with bounds in the schemas. */
type Range = { min?: number; max?: number };
const ranges = new Map<string, Range[]>();
function addRange(name: string, schema: any) {
  const r: Range = {
    min: schema.minimum ?? schema.minLength ?? schema.minItems,
    max: schema.maximum ?? schema.maxLength ?? schema.maxItems,
  };
  const known = ranges.get(name) ?? [];
  if ((r.min === undefined && r.max === undefined) || known.some((k) => k.min === r.min && k.max === r.max)) return;
  ranges.set(name, [...(ranges.get(name) ?? []), r]);
}
for (const op of ['listNews', 'searchNews', 'getAccountUsage'])
  for (const p of operationParameters(op)) addRange(p.name, p.schema);
const openapiDoc = loadYaml('openapi.yaml');
for (const [name, schema] of Object.entries<any>(openapiDoc.components.schemas.Article.properties))
  if (!schema.$ref) addRange(name, schema);
for (const [name, schema] of Object.entries<any>(openapiDoc.components.schemas.TickerSentiment.properties))
  if (!schema.$ref) addRange(name, schema);

// ---------------------------------------------------------------------------------------------------
// Statements: a table row, a list item, a paragraph, a line of a code block.

interface Statement {
  where: string;
  text: string;
  /** The parameter or property a spec description belongs to (the subject of a bare `1 to 100`). */
  subject?: string;
}

function statements(markdown: string, where: string, subject?: string): Statement[] {
  const out: Statement[] = [];
  let current: { line: number; parts: string[] } | undefined;
  let fenced = false;
  const flush = () => {
    if (current)
      out.push({ where: `${where}:${current.line}`, text: current.parts.join(' '), ...(subject ? { subject } : {}) });
    current = undefined;
  };
  markdown.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line.startsWith('```')) {
      flush();
      fenced = !fenced;
      return;
    }
    if (fenced || line.startsWith('|') || line.startsWith('#')) {
      flush();
      if (line && !/^\|[\s|:-]+\|$/.test(line))
        out.push({ where: `${where}:${i + 1}`, text: line, ...(subject ? { subject } : {}) });
      return;
    }
    if (!line) return flush();
    if (/^([-*+]|\d+\.)\s/.test(line)) flush();
    if (!current) current = { line: i + 1, parts: [] };
    current.parts.push(line);
  });
  flush();
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Claims: a number in a statement, what rule it states, and what the contract says.

interface Claim {
  where: string;
  text: string;
  rule: string;
  said: string;
  /** What the contract makes of it; `ok` false is a disagreement. */
  contract: string;
  ok: boolean;
}

const TIER = '(?:starter|pro|max|expired|free)';
const tierMention = new RegExp(`(?<![\\w-])\`?(?:fns_test_)?(${TIER})\`?(?![\\w-])`, 'gi');
const followingTiers = new RegExp(`^\\s*(?:\\(|for\\s+|:\\s*)((?:\`?${TIER}\`?(?:\\s*(?:,|and|or)\\s*)?)+)`, 'i');
const num = (s: string) => Number(s.replace(/,/g, ''));
const WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  a: 1,
  single: 1,
};
const UNIT_SECONDS: Record<string, number> = {
  s: 1,
  second: 1,
  seconds: 1,
  min: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hour: 3600,
  hours: 3600,
  day: DAY_S,
  days: DAY_S,
};
const duration =
  /(?<![\w.,])(\d[\d,]*)(?:\s+|-)?(seconds|second|s|minutes|minute|min|hours|hour|h|days|day)(?![\w/])/gi;
const say = (seconds: number) =>
  seconds % DAY_S === 0 && seconds > DAY_S
    ? `${seconds / DAY_S} days`
    : seconds % 3600 === 0
      ? `${seconds / 3600} h`
      : seconds % 60 === 0
        ? `${seconds / 60} min`
        : `${seconds} s`;

interface Quantity {
  kind: 'rate' | 'lookback';
  index: number;
  end: number;
  said: string;
  value: number;
  /** For a rate: the window it is given per, in seconds. */
  perSeconds?: number;
}

function claims(st: Statement): Claim[] {
  const text = st.text;
  const lower = text.toLowerCase();
  const found: Claim[] = [];
  const claim = (rule: string, said: string, expected: string, ok: boolean) =>
    found.push({ where: st.where, text, rule, said, contract: expected, ok });
  const ipUnit = /\bip\b|different (api )?keys|distinct keys/.test(lower);
  const quantities: Quantity[] = [];

  // Rates: `N req/min`, `N requests per minute`, `N requests per 60 seconds`.
  for (const m of text.matchAll(
    /(\d[\d,]*)\s+(?:req|requests?)\s*(?:\/\s*min\b|(?:per|a|each)\s+minute\b|per\s+(\d+)\s*(?:s|seconds?)\b)/gi,
  )) {
    quantities.push({
      kind: 'rate',
      index: m.index!,
      end: m.index! + m[0].length,
      said: m[0],
      value: num(m[1]!),
      perSeconds: m[2] ? num(m[2]) : 60,
    });
  }

  // Durations, classified by what is around them.
  for (const m of text.matchAll(duration)) {
    const unit = m[2]!.toLowerCase();
    const seconds = num(m[1]!) * UNIT_SECONDS[unit]!;
    const before = lower.slice(Math.max(0, m.index! - 60), m.index!);
    const after = lower.slice(m.index! + m[0].length, m.index! + m[0].length + 30);
    const said = m[0];
    if (/^\s*lookback/.test(after) && seconds % 3600 === 0) {
      quantities.push({ kind: 'lookback', index: m.index!, end: m.index! + said.length, said, value: seconds / 3600 });
    } else if (ipUnit && /block(?:s|ed)?\b[^.;:]{0,30}\bfor\s+$/.test(before)) {
      claim('IP guard block', said, say(contract.ipBlockSeconds), seconds === contract.ipBlockSeconds);
    } else if (ipUnit && /(?:within|in|older than|of)\s+$/.test(before)) {
      claim('IP guard window', said, say(contract.ipWindowSeconds), seconds === contract.ipWindowSeconds);
    } else if (
      seconds % DAY_S === 0 &&
      (/grace[^.;]{0,30}$/.test(before) ||
        /^\s*grace/.test(after) ||
        /^[,;]?\s*then free/.test(after) ||
        /^\s*after cancel/.test(after))
    ) {
      claim('grace window', said, say(contract.graceWindowSeconds), seconds === contract.graceWindowSeconds);
    } else if (/pings?\s+every\s+$/.test(before)) {
      claim('stream ping interval', said, say(contract.pingIntervalSeconds), seconds === contract.pingIntervalSeconds);
    } else if ((/every\s+$/.test(before) && /check/.test(lower)) || /^\s*re-?check/.test(after)) {
      claim('stream re-check interval', said, say(contract.recheckSeconds), seconds === contract.recheckSeconds);
    } else if (
      UNIT_SECONDS[unit]! === 1 &&
      /request|rate|limit|window/.test(lower) &&
      (/(?:any|in|per|last|current)\s+(?:\*\*)?$/.test(before) || /^\s*(?:interval|window|sliding|ahead)/.test(after))
    ) {
      claim('rate window', said, say(contract.rateWindowSeconds), seconds === contract.rateWindowSeconds);
    } else if (
      seconds % 3600 === 0 &&
      /lookback|looks? back|older than|window|clamp/.test(lower) &&
      !/grace/.test(lower)
    ) {
      quantities.push({ kind: 'lookback', index: m.index!, end: m.index! + said.length, said, value: seconds / 3600 });
    }
  }

  // Rates and lookbacks belong to tiers: `24 hours for starter and expired`, `24 hours (starter)`,
  // else the nearest tier named before it (`starter, 1 req/min`); with no tier, any plan's value.
  const mentions = [...text.matchAll(tierMention)].map((m) => ({
    tier: m[1]!.toLowerCase() as Tier,
    index: m.index!,
    used: false,
  }));
  const bound = new Map<Quantity, Tier[]>();
  for (const q of quantities) {
    const f = followingTiers.exec(text.slice(q.end));
    if (!f) continue;
    const start = q.end + f.index + f[0].length - f[1]!.length;
    const ts = mentions.filter((t) => t.index >= start && t.index < q.end + f.index + f[0].length);
    ts.forEach((t) => (t.used = true));
    bound.set(
      q,
      ts.map((t) => t.tier),
    );
  }
  for (const q of quantities) {
    if (bound.has(q)) continue;
    const prev = mentions.filter((t) => t.index < q.index && !t.used).at(-1);
    if (prev && !quantities.some((o) => o !== q && o.kind === q.kind && o.index > prev.index && o.index < q.index))
      bound.set(q, [prev.tier]);
  }
  for (const q of quantities) {
    const ts = bound.get(q);
    const valueOf = (t: Tier) => (q.kind === 'rate' ? plans[t].rateLimit : plans[t].lookbackHours);
    const agrees = (t: Tier) =>
      valueOf(t) === q.value && (q.kind !== 'rate' || q.perSeconds === contract.rateWindowSeconds);
    const sayPlan = (t: Tier) =>
      q.kind === 'rate'
        ? `${t}: ${plans[t].rateLimit} per ${say(contract.rateWindowSeconds)}`
        : `${t}: ${say(plans[t].lookbackHours * 3600)}`;
    if (ts?.length) {
      for (const t of ts)
        claim(q.kind === 'rate' ? `rate limit of ${t}` : `lookback of ${t}`, q.said, sayPlan(t), agrees(t));
    } else {
      const candidates = tiers.filter((t) => valueOf(t) > 0);
      claim(
        q.kind === 'rate' ? 'rate limit (some plan)' : 'lookback (some plan)',
        q.said,
        candidates.map(sayPlan).join(', '),
        candidates.some(agrees),
      );
    }
  }

  // The IP guard's key count: `3 or more different API keys`, `brings the count to 3`.
  for (const m of text.matchAll(/(\d+)\s+(?:or more\s+)?(?:different|distinct)\s+(?:api\s+)?keys/gi)) {
    claim('IP guard keys', m[0], String(contract.ipDistinctKeys), num(m[1]!) === contract.ipDistinctKeys);
  }
  if (ipUnit)
    for (const m of text.matchAll(/count to (\d+)/gi))
      claim('IP guard keys', m[0], String(contract.ipDistinctKeys), num(m[1]!) === contract.ipDistinctKeys);

  // The echo cap, the request-head cap, the stream send buffer, connections per account.
  for (const m of text.matchAll(/first (\d[\d,]*) characters/gi))
    claim('echo cap', m[0], String(contract.echoMaxChars), num(m[1]!) === contract.echoMaxChars);
  if (/header/.test(lower)) {
    for (const m of text.matchAll(/(\d[\d,]*)\s+bytes/gi))
      claim(
        'request head cap',
        m[0],
        String(contract.requestHeadMaxBytes),
        num(m[1]!) === contract.requestHeadMaxBytes,
      );
  }
  // A size in MiB is the stream's send buffer only in a statement about the stream's buffer or slow
  // consumers (the poller's body cap and the push endpoint's body limit are sizes too).
  if (/buffer|slow consumer|1013/i.test(text)) {
    for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*MiB/g))
      claim(
        'stream send buffer',
        m[0],
        `${contract.maxBufferedBytes / 2 ** 20} MiB`,
        num(m[1]!) * 2 ** 20 === contract.maxBufferedBytes,
      );
  }
  for (const m of text.matchAll(
    /\b(\d+|one|two|three|four|five|a|single)\s+(?:stream\s+)?connections?\s+per\s+(?:\*\*)?account/gi,
  )) {
    const n = /^\d+$/.test(m[1]!) ? num(m[1]!) : WORDS[m[1]!.toLowerCase()]!;
    claim(
      'connections per account',
      m[0],
      String(contract.connectionsPerAccount),
      n === contract.connectionsPerAccount,
    );
  }

  // Ranges: `limit … between 1 and 100`, `q, 2 to 500 characters`, `content … at most 20,000 characters`.
  // A possessive (`the source's own id`) or a placeholder (`<url>`) is no subject.
  const subjects = [...text.matchAll(/(?<![<\w])`?([a-z_]+)`?(?!['’>\w])/gi)].filter((m) => ranges.has(m[1]!));
  const subjectBefore = (index: number) =>
    subjects.filter((m) => m.index! < index && !/[.;]\s/.test(text.slice(m.index!, index))).at(-1)?.[1] ?? st.subject;
  const checkRange = (said: string, index: number, min: number | undefined, max: number) => {
    const name = subjectBefore(index);
    const known = name ? ranges.get(name) : undefined;
    if (!known) return;
    const ok = known.some((r) => r.max === max && (min === undefined || r.min === min));
    claim(`range of ${name}`, said, known.map((r) => `${r.min ?? '…'} to ${r.max ?? '…'}`).join(' or '), ok);
  };
  for (const m of text.matchAll(
    /(?:between\s+(\d[\d,]*)\s+and\s+(\d[\d,]*)|(?<![\w.:-])(\d[\d,]*)\s+to\s+(\d[\d,]*)(?![\w.:-]))/gi,
  )) {
    checkRange(m[0], m.index!, num(m[1] ?? m[3]!), num(m[2] ?? m[4]!));
  }
  for (const m of text.matchAll(/at most (\d[\d,]*) characters/gi)) checkRange(m[0], m.index!, undefined, num(m[1]!));
  // A `limit=N` outside the bounds only appears as a request the service refuses.
  const limitRanges = ranges.get('limit')!;
  for (const m of text.matchAll(/\blimit=(\d+)/g)) {
    const n = num(m[1]!);
    if (limitRanges.every((r) => n < r.min! || n > r.max!))
      claim(
        'out-of-range limit shown as refused',
        m[0],
        `400 (bounds ${limitRanges.map((r) => `${r.min} to ${r.max}`).join(', ')})`,
        /\b400\b|bad|invalid|refuse/.test(lower),
      );
  }
  return found;
}

function check(sts: Statement[]): { checked: Claim[]; mismatches: Claim[] } {
  const checked = sts.flatMap(claims);
  return { checked, mismatches: checked.filter((c) => !c.ok) };
}

// ---------------------------------------------------------------------------------------------------
// The sources.

function markdownFiles(): { where: string; text: string }[] {
  const files = [{ where: 'README.md', text: readFileSync(join(repoRoot, 'README.md'), 'utf8') }];
  const docs = join(repoRoot, 'docs');
  if (existsSync(docs)) {
    for (const f of readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .sort())
      files.push({ where: `docs/${f}`, text: readFileSync(join(docs, f), 'utf8') });
  }
  return files;
}

/** Every `description` and `summary` of a spec, with the parameter or property it describes. */
function specStatements(file: string): Statement[] {
  const doc = loadYaml(file);
  const out: Statement[] = [];
  const walk = (node: any, path: string[], subject?: string) => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, [...path, String(i)], subject));
    if (!node || typeof node !== 'object') return;
    const here =
      typeof node.name === 'string' && typeof node.in === 'string'
        ? node.name
        : path.at(-2) === 'properties'
          ? path.at(-1)
          : subject;
    for (const [k, v] of Object.entries<any>(node)) {
      if ((k === 'description' || k === 'summary') && typeof v === 'string') {
        let text = v;
        // The plan table is descriptions.test.ts's: leave its rows out here.
        if (file === 'openapi.yaml' && path.length === 1 && path[0] === 'info' && k === 'description')
          text = withoutTable(v, 'Plans');
        out.push(...statements(text, `${file} ${[...path, k].join('.')}`, here));
      } else walk(v, [...path, k], here);
    }
  };
  walk(doc, []);
  return out;
}

function withoutTable(markdown: string, heading: string): string {
  let inSection = false;
  return markdown
    .split('\n')
    .map((l) => {
      if (l.startsWith('## ')) inSection = l.slice(3).trim() === heading;
      return inSection && l.trim().startsWith('|') ? '' : l;
    })
    .join('\n');
}

const report = (cs: Claim[]) =>
  cs.map((c) => `${c.where} [${c.rule}] says "${c.said}", contract: ${c.contract}\n    ${c.text}`).join('\n');

// ---------------------------------------------------------------------------------------------------

describe('README.md and docs/*.md agree with the contract', () => {
  const files = markdownFiles();
  it.each(files.map((f) => [f.where, f.text] as const))('%s', (where, text) => {
    const { checked, mismatches } = check(statements(text, where));
    expect(report(mismatches), 'statements that disagree with openapi.yaml / asyncapi.yaml').toBe('');
    if (where === 'README.md')
      expect(checked.length, 'the README states plan numbers; none were found').toBeGreaterThan(0);
  });
});

describe('the prose of openapi.yaml and asyncapi.yaml agrees with the contract (outside the plan table)', () => {
  it.each(['openapi.yaml', 'asyncapi.yaml'])('%s', (file) => {
    const { checked, mismatches } = check(specStatements(file));
    expect(report(mismatches)).toBe('');
    expect(checked.length).toBeGreaterThan(0);
  });

  it('leaves the plan table to descriptions.test.ts but reads the prose around it', () => {
    const sts = specStatements('openapi.yaml').filter((s) => s.where.startsWith('openapi.yaml info.description'));
    expect(sts.some((s) => s.text.startsWith('|'))).toBe(false);
    expect(sts.some((s) => /grace window/.test(s.text))).toBe(true);
  });
});

describe('the extraction', () => {
  const all = [
    ...markdownFiles().flatMap((f) => statements(f.text, f.where)),
    ...specStatements('openapi.yaml'),
    ...specStatements('asyncapi.yaml'),
  ];
  const rules = new Set(check(all).checked.map((c) => c.rule.replace(/ of (starter|pro|max|expired|free)$/, '')));

  it.each([
    'rate limit',
    'lookback',
    'grace window',
    'IP guard keys',
    'IP guard window',
    'IP guard block',
    'rate window',
    'echo cap',
    'range of limit',
    'range of q',
    'range of content',
  ])('finds at least one statement of the rule "%s" in the docs (so it is really checked)', (rule) => {
    expect([...rules]).toContain(rule);
  });

  // Texts built from the contract's own numbers, so these stay right when the numbers change.
  const p = plans;
  const graceDays = contract.graceWindowSeconds / DAY_S;
  const lb = (t: Tier) =>
    p[t].lookbackHours % 24 === 0 && p[t].lookbackHours > 24
      ? `${p[t].lookbackHours / 24} days`
      : `${p[t].lookbackHours} hours`;
  const q = ranges.get('q')![0]!;
  const good = [
    `| \`fns_test_starter\` | starter, ${p.starter.rateLimit} req/min | list |`,
    `| \`fns_test_pro\` | pro, ${p.pro.rateLimit} req/min | list |`,
    `| \`fns_test_expired\` | cancelled, in the ${graceDays}-day grace window | list |`,
    '',
    `The lookback window is ${lb('starter')} for \`starter\` and \`expired\` keys and ${lb('pro')} for \`pro\` and \`max\` keys.`,
    '',
    `- \`expired\`: cancelled. For a grace window of ${graceDays} days the key keeps working,`,
    `  throttled to ${p.expired.rateLimit} request per minute with a ${p.expired.lookbackHours}-hour lookback.`,
    '',
    `When ${contract.ipDistinctKeys} or more different API keys come from one IP address within ${contract.ipWindowSeconds} seconds,`,
    `that IP address is blocked for ${contract.ipBlockSeconds / 60} minutes.`,
    '',
    `A \`detail\` echoes at most the first ${contract.echoMaxChars} characters; \`q\` is ${q.min} to ${q.max} characters.`,
    '',
    '```sh',
    `npx fns accounts cancel acct_1   # expired (${p.expired.rateLimit} req/min, ${p.expired.lookbackHours} h lookback) for ${graceDays} days, then free`,
    '```',
  ].join('\n');

  it('accepts a text that says what the contract says, and reads every number in it', () => {
    const { checked, mismatches } = check(statements(good, 'good.md'));
    expect(report(mismatches)).toBe('');
    expect(checked.map((c) => c.rule).sort()).toEqual(
      [
        'rate limit of starter',
        'rate limit of pro',
        'grace window',
        'lookback of starter',
        'lookback of expired',
        'lookback of pro',
        'lookback of max',
        'grace window',
        'rate limit of expired',
        'lookback of expired',
        'IP guard keys',
        'IP guard window',
        'IP guard block',
        'echo cap',
        'range of q',
        'rate limit of expired',
        'lookback of expired',
        'grace window',
      ].sort(),
    );
  });

  const wrong: [string, string, string][] = [
    ['a rate', `pro, ${p.pro.rateLimit} req/min`, `pro, ${p.pro.rateLimit + 5} req/min`],
    [
      'a rate given to the wrong tier',
      `starter, ${p.starter.rateLimit} req/min`,
      `starter, ${p.max.rateLimit} req/min`,
    ],
    ['a lookback', `${lb('starter')} for \`starter\``, `${p.starter.lookbackHours + 24} hours for \`starter\``],
    [
      'lookbacks swapped between tiers',
      `is ${lb('starter')} for \`starter\` and \`expired\` keys and ${lb('pro')} for`,
      `is ${lb('pro')} for \`starter\` and \`expired\` keys and ${lb('starter')} for`,
    ],
    ['the grace window', `${graceDays}-day grace`, `${graceDays + 7}-day grace`],
    ['the grace window in a code comment', `for ${graceDays} days, then free`, `for ${graceDays + 1} days, then free`],
    [
      'the IP guard key count',
      `${contract.ipDistinctKeys} or more different`,
      `${contract.ipDistinctKeys + 2} or more different`,
    ],
    [
      'the IP guard window',
      `within ${contract.ipWindowSeconds} seconds`,
      `within ${contract.ipWindowSeconds * 2} seconds`,
    ],
    [
      'the IP guard block',
      `blocked for ${contract.ipBlockSeconds / 60} minutes`,
      `blocked for ${contract.ipBlockSeconds / 60 + 5} minutes`,
    ],
    ['the echo cap', `first ${contract.echoMaxChars} characters`, `first ${contract.echoMaxChars * 2} characters`],
    ['a parameter range', `is ${q.min} to ${q.max} characters`, `is ${q.min} to ${q.max! - 100} characters`],
  ];
  it.each(wrong)('reports %s that disagrees with the contract', (_what, right, bad) => {
    expect(good).toContain(right);
    const text = good.replace(right, bad);
    const { mismatches } = check(statements(text, 'wrong.md'));
    expect(mismatches.length, report(check(statements(text, 'wrong.md')).checked)).toBeGreaterThan(0);
    expect(mismatches.every((m) => m.where.startsWith('wrong.md:'))).toBe(true);
  });

  it('reports a wrong number in a README restructured around it (no line numbers involved)', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const sections = readme.split('\n## ');
    const restructured = `# Plans\n\nSomething new first.\n\n${[sections[0], ...sections.slice(1).reverse()].join('\n## ')}\n\n- \`max\`: ${p.max.rateLimit * 2} requests per minute.\n`;
    const { mismatches } = check(statements(restructured, 'README.md'));
    expect(mismatches.map((m) => m.rule)).toEqual(['rate limit of max']);
  });

  it('reports an out-of-range limit shown as if it worked', () => {
    const text = `curl -s 'http://localhost:4010/v1/news?limit=${limitRangesMax() + 1}'   # the newest articles`;
    expect(check(statements(text, 'x.md')).mismatches.map((m) => m.rule)).toEqual([
      'out-of-range limit shown as refused',
    ]);
    expect(check(statements(`${text} -> 400`, 'x.md')).mismatches).toEqual([]);
  });
});

function limitRangesMax(): number {
  return Math.max(...ranges.get('limit')!.map((r) => r.max!));
}
