/**
 * Two sample feeds (RSS 2.0, Atom 1.0) on loopback for `npm run demo`, answering conditional GETs. Every fourth
 * round one story is on both wires, reworded, same URL but tracking parameters: the stream shows it once (dedup).
 * Polled only because the demo sets FEED_ALLOW_PRIVATE (src/cli/demo.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface DemoItem {
  guid: string;
  title: string;
  link: string;
  published: number;
}

const HARBOR = [
  'Apple shares rise after iPhone sales top estimates',
  'BREAKING: Fed holds rates steady, signals patience on cuts',
  'Copper climbs to a two-month high on China stimulus hopes',
  'Nvidia extends rally as data-center demand stays strong',
  'Oil slips as OPEC+ weighs larger output increase',
  'JPMorgan beats profit forecasts on trading revenue',
  'Euro falls after weak German factory orders',
  'Boeing cuts delivery outlook amid supplier delays',
  'Treasury yields edge higher before jobs report',
  'Walmart raises annual guidance as shoppers trade down',
];

const SUMMIT = [
  'Microsoft wins cloud contract worth $2 billion',
  'FLASH: ECB raises deposit rate by 25 basis points',
  'Gold steadies near record as dollar weakens',
  'Tesla recalls 120,000 vehicles over seat-belt warning',
  'Pfizer shares slump after trial misses main goal',
  'Bank of Japan keeps yield-curve control unchanged',
  'Amazon expands same-day delivery to 20 more cities',
  'Exxon profit falls as refining margins narrow',
  'Bitcoin jumps 6% as ETF inflows accelerate',
  'Goldman Sachs plans 3% staff cut in annual review',
];

/** Stories both wires carry: [Harbor's wording, Summit's wording, article path]. */
const SHARED: [string, string, string][] = [
  [
    'Intel to cut 15% of jobs in turnaround plan',
    'Intel plans to cut 15% of its jobs in turnaround push',
    'intel-job-cuts',
  ],
  [
    'Netflix subscriber growth beats forecasts',
    'Netflix subscriber growth beats analyst forecasts',
    'netflix-subscribers',
  ],
  ['Shell announces $3.5 billion share buyback', 'Shell announces a $3.5 billion buyback of shares', 'shell-buyback'],
  [
    'Visa and Mastercard settle merchant fee lawsuit',
    'Mastercard and Visa settle lawsuit over merchant fees',
    'card-fee-settlement',
  ],
];

/** How many items each feed keeps (older ones drop off, as on a real feed). */
const FEED_LENGTH = 20;

export interface DemoFeeds {
  rssUrl: string;
  atomUrl: string;
  close(): Promise<void>;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function rss(items: DemoItem[], self: string): string {
  const entries = items
    .map(
      (i) =>
        `    <item>\n      <title>${xml(i.title)}</title>\n      <link>${xml(i.link)}</link>\n      <guid isPermaLink="false">${xml(i.guid)}</guid>\n      <pubDate>${new Date(i.published).toUTCString()}</pubDate>\n    </item>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>Harbor Wire (demo)</title>
    <link>${xml(self)}</link>
    <description>Sample market headlines for the Financial News Service demo</description>
${entries}
  </channel>
</rss>
`;
}

function atom(items: DemoItem[], self: string): string {
  const updated = new Date(items[0]?.published ?? 0).toISOString();
  const entries = items
    .map(
      (i) =>
        `  <entry>\n    <id>${xml(i.guid)}</id>\n    <title type="text">${xml(i.title)}</title>\n    <link href="${xml(i.link)}"/>\n    <updated>${new Date(i.published).toISOString()}</updated>\n  </entry>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Summit Newswire (demo)</title>
  <id>${xml(self)}</id>
  <link rel="self" href="${xml(self)}"/>
  <updated>${updated}</updated>
${entries}
</feed>
`;
}

/** Starts both feeds on a free loopback port, a few items each, then a round every four seconds. */
export async function startDemoFeeds(): Promise<DemoFeeds> {
  const wires = new DemoWires();
  // A few items from the start: the first poll finds something.
  for (let i = 0; i < 4; i++) wires.publishNext();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => serveFeed(wires, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const timer = setInterval(() => wires.publishNext(), 4000);
  timer.unref();
  return {
    rssUrl: `${base}/harbor.rss`,
    atomUrl: `${base}/summit.atom`,
    async close() {
      clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Wire = 'rss' | 'atom';

/** The wires' items (newest first), counts and change times; round n always publishes the same headlines and links. */
class DemoWires {
  readonly items: Record<Wire, DemoItem[]> = { rss: [], atom: [] };
  readonly counts: Record<Wire, number> = { rss: 0, atom: 0 };
  /** Per feed: what changes its ETag and Last-Modified. */
  readonly modified: Record<Wire, number> = { rss: Date.now(), atom: Date.now() };
  private round = 0;

  /** Every fourth round a story on both wires, otherwise Harbor's and Summit's headlines in turn. */
  publishNext(): void {
    const r = this.round++;
    if (r % 4 === 3) {
      const [a, b, path] = SHARED[Math.floor(r / 4) % SHARED.length]!;
      this.add('rss', a, `https://example.com/markets/${path}?utm_source=harbor&utm_medium=rss`);
      this.add('atom', b, `https://example.com/markets/${path}?utm_source=summit&utm_campaign=wire#top`);
    } else if (r % 2 === 0) {
      const t = HARBOR[Math.floor(r / 2) % HARBOR.length]!;
      this.add('rss', t, `https://example.com/harbor/${this.counts.rss + 1}-${slug(t)}`);
    } else {
      const t = SUMMIT[Math.floor(r / 2) % SUMMIT.length]!;
      this.add('atom', t, `https://example.com/summit/${this.counts.atom + 1}-${slug(t)}`);
    }
  }

  private add(wire: Wire, title: string, link: string): void {
    const items = this.items[wire];
    this.counts[wire]++;
    items.unshift({ guid: `demo-${wire}-${this.counts[wire]}`, title, link, published: Date.now() });
    items.length = Math.min(items.length, FEED_LENGTH);
    this.modified[wire] = Date.now();
  }
}

function slug(t: string): string {
  return t
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);
}

/** GET and HEAD of `/harbor.rss` and `/summit.atom` (304 on a matching If-None-Match); 405 or 404 otherwise. */
function serveFeed(wires: DemoWires, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  const feed = path === '/harbor.rss' ? 'rss' : path === '/summit.atom' ? 'atom' : undefined;
  if (!feed || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(feed ? 405 : 404, { 'content-type': 'text/plain' }).end(feed ? 'GET only\n' : 'not found\n');
    return;
  }
  const etag = `"${feed}-${wires.counts[feed]}"`;
  const lastModified = new Date(wires.modified[feed]).toUTCString();
  const headers = { etag, 'last-modified': lastModified, 'cache-control': 'no-cache' };
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers).end();
    return;
  }
  const self = `http://${req.headers.host}${path}`;
  const body = feed === 'rss' ? rss(wires.items.rss, self) : atom(wires.items.atom, self);
  res.writeHead(200, {
    ...headers,
    'content-type': feed === 'rss' ? 'application/rss+xml; charset=utf-8' : 'application/atom+xml; charset=utf-8',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
