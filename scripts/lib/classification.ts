/** Scores of a classifier: accuracy, macro and weighted F1, and the confusion matrix as printable rows. */
export interface Scores {
  n: number;
  accuracy: number;
  macroF1: number;
  weightedF1: number;
  /** confusion.get(want).get(got) = count */
  confusion: Map<string, Map<string, number>>;
}

export function score(pairs: readonly { want: string; got: string }[], labels: readonly string[]): Scores {
  const confusion = new Map<string, Map<string, number>>();
  for (const l of labels) confusion.set(l, new Map(labels.map((m) => [m, 0])));
  let right = 0;
  for (const { want, got } of pairs) {
    const row = confusion.get(want) ?? new Map<string, number>();
    confusion.set(want, row);
    row.set(got, (row.get(got) ?? 0) + 1);
    if (want === got) right++;
  }
  let macro = 0;
  let weighted = 0;
  let present = 0;
  for (const l of labels) {
    const tp = confusion.get(l)?.get(l) ?? 0;
    const support = [...(confusion.get(l)?.values() ?? [])].reduce((a, b) => a + b, 0);
    const predicted = [...confusion.values()].reduce((a, row) => a + (row.get(l) ?? 0), 0);
    const precision = predicted === 0 ? 0 : tp / predicted;
    const recall = support === 0 ? 0 : tp / support;
    const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
    if (support > 0) {
      macro += f1;
      present++;
    }
    weighted += f1 * support;
  }
  const n = pairs.length;
  return {
    n,
    accuracy: n === 0 ? 0 : right / n,
    macroF1: present === 0 ? 0 : macro / present,
    weightedF1: n === 0 ? 0 : weighted / n,
    confusion,
  };
}

/** The confusion matrix as text lines: one row per wanted label, one column per answered label. */
export function confusionLines(s: Scores, labels: readonly string[], indent = '    '): string[] {
  const w = Math.max(8, ...labels.map((l) => l.length + 1));
  const head = `${indent}${'want \\ got'.padEnd(12)}${labels.map((l) => l.padStart(w)).join('')}`;
  const rows = labels
    .filter((l) => [...(s.confusion.get(l)?.values() ?? [])].some((v) => v > 0))
    .map(
      (l) =>
        `${indent}${l.padEnd(12)}${labels.map((m) => String(s.confusion.get(l)?.get(m) ?? 0).padStart(w)).join('')}`,
    );
  return [head, ...rows];
}
