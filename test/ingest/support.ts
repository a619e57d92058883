/** What the ingestion suites share: counting event-loop turns, and RSS feeds of distinct headlines. */

/** Counts the turns of the event loop from now: a setImmediate chain re-armed at every turn until `stop`. */
export function turnCounter(): { turns: () => number; stop: () => number } {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    turns: () => turns,
    stop: () => ((running = false), turns),
  };
}

/** Counts the turns of the event loop while `work` runs. */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  const counter = turnCounter();
  const result = await work();
  return { result, turns: counter.stop() };
}

/** The vocabulary of the headlines. */
export const words =
  'harbor copper lithium pipeline refinery tariff merger lawsuit pension dividend bond yield inflation payroll'.split(
    ' ',
  );
/** A distinct headline per `i`. */
export const title = (i: number) => `${words[i % 14]} ${words[(i * 3) % 14]} ${words[(i * 5) % 14]} story number ${i}`;
/** An RSS 2.0 feed of `n` items (guid `g-<i>`), each description `pad` characters long. */
export const rssOf = (n: number, pad = 0) =>
  `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>t</title>${Array.from(
    { length: n },
    (_, i) =>
      `<item><title>${title(i)}</title><link>https://ex.com/${i}</link><guid>g-${i}</guid><description>${'x'.repeat(pad)}</description></item>`,
  ).join('')}</channel></rss>`;
