/**
 * Multinomial logistic regression over hashed sparse binary features, trained by AdaGrad with L2 on the
 * weights each example touches. Deterministic: a seeded shuffle, one fixed order of float operations.
 */
import { prng } from './random.js';

export interface Example {
  /** Unique feature buckets. */
  x: Int32Array;
  y: number;
}

export interface TrainOptions {
  buckets: number;
  classes: number;
  epochs: number;
  rate: number;
  l2: number;
  seed: number;
  /** Per class: how much its examples weigh (1 by default). */
  classWeight?: number[];
}

export function train(examples: readonly Example[], o: TrainOptions): Float64Array {
  const k = o.classes;
  const w = new Float64Array(o.buckets * k);
  const g2 = new Float64Array(o.buckets * k).fill(1e-8);
  const order = examples.map((_, i) => i);
  const rand = prng(o.seed);
  const p = new Float64Array(k);
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    shuffle(order, rand);
    for (const idx of order) {
      const ex = examples[idx]!;
      probabilities(w, k, ex.x, p);
      const cw = o.classWeight?.[ex.y] ?? 1;
      for (const b of ex.x) {
        const base = b * k;
        for (let c = 0; c < k; c++) {
          const grad = cw * (p[c]! - (c === ex.y ? 1 : 0)) + o.l2 * w[base + c]!;
          g2[base + c]! += grad * grad;
          w[base + c]! -= (o.rate * grad) / Math.sqrt(g2[base + c]!);
        }
      }
    }
  }
  return w;
}

/** Softmax of the example's scores, into `p`. */
export function probabilities(w: Float64Array, k: number, x: Int32Array, p: Float64Array): void {
  p.fill(0);
  for (const b of x) for (let c = 0; c < k; c++) p[c]! += w[b * k + c]!;
  softmax(p);
}

/** Scores to probabilities, in place (shifted by the largest score: no overflow). */
function softmax(p: Float64Array): void {
  let max = -Infinity;
  for (const v of p) max = Math.max(max, v);
  let sum = 0;
  for (let c = 0; c < p.length; c++) {
    p[c] = Math.exp(p[c]! - max);
    sum += p[c]!;
  }
  for (let c = 0; c < p.length; c++) p[c]! /= sum;
}

/** Fisher-Yates with the seeded generator: the same order for the same seed. */
function shuffle(order: number[], rand: () => number): void {
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
}

export function predictClass(w: Float64Array, k: number, x: Int32Array): number {
  const s = new Float64Array(k);
  for (const b of x) for (let c = 0; c < k; c++) s[c]! += w[b * k + c]!;
  let best = 0;
  for (let c = 1; c < k; c++) if (s[c]! > s[best]!) best = c;
  return best;
}

/** int8 per class, each class scaled by its largest weight; sparse as src/enrich/model.ts reads it, base64. */
export function quantise(w: Float64Array, k: number): { scale: number[]; weights: string } {
  const scale: number[] = [];
  for (let c = 0; c < k; c++) {
    let max = 0;
    for (let i = c; i < w.length; i += k) max = Math.max(max, Math.abs(w[i]!));
    scale.push(max === 0 ? 1 : Number((max / 127).toPrecision(8)));
  }
  const bytes: number[] = [];
  let previous = -1;
  const q = new Array<number>(k);
  for (let b = 0; b * k < w.length; b++) {
    let any = false;
    for (let c = 0; c < k; c++) {
      q[c] = Math.max(-127, Math.min(127, Math.round(w[b * k + c]! / scale[c]!)));
      if (q[c] !== 0) any = true;
    }
    if (!any) continue;
    for (let gap = b - previous; ; gap = Math.floor(gap / 128)) {
      if (gap < 128) {
        bytes.push(gap);
        break;
      }
      bytes.push((gap % 128) | 0x80);
    }
    previous = b;
    for (let c = 0; c < k; c++) bytes.push(q[c]! & 0xff);
  }
  return { scale, weights: Buffer.from(bytes).toString('base64') };
}

/**
 * NBSVM-style multinomial logistic regression (Wang & Manning 2012, one-vs-rest ratios): feature f's input
 * for label c is r[f][c], the naive-Bayes log-count ratio of f in label c against the other labels (add-`alpha`
 * smoothed), and a bias per label without L2. Returns the effective weights w × r with the bias folded into
 * `biasBucket` (a feature every example and every scored text has exactly once), so the model reads as the
 * plain linear model of `train`. Same AdaGrad, shuffle and class weights as `train`.
 */
export function trainNB(
  examples: readonly Example[],
  o: TrainOptions & { alpha: number; biasBucket: number },
): Float64Array {
  const k = o.classes;
  const B = o.buckets;
  const cnt = new Float64Array(B * k);
  for (const ex of examples) for (const b of ex.x) cnt[b * k + ex.y]!++;
  const tot = new Float64Array(k);
  const all = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    for (let c = 0; c < k; c++) {
      tot[c]! += cnt[b * k + c]! + o.alpha;
      all[b]! += cnt[b * k + c]!;
    }
  }
  let totAll = 0;
  for (let c = 0; c < k; c++) totAll += tot[c]!;
  const r = new Float64Array(B * k);
  for (let b = 0; b < B; b++) {
    for (let c = 0; c < k; c++) {
      const p = (cnt[b * k + c]! + o.alpha) / tot[c]!;
      const q = (all[b]! - cnt[b * k + c]! + (k - 1) * o.alpha) / (totAll - tot[c]!);
      r[b * k + c] = Math.log(p / q);
    }
  }
  const w = new Float64Array(B * k);
  const g2 = new Float64Array(B * k).fill(1e-8);
  const bias = new Float64Array(k);
  const gb = new Float64Array(k).fill(1e-8);
  const order = examples.map((_, i) => i);
  const rand = prng(o.seed);
  const p = new Float64Array(k);
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    shuffle(order, rand);
    for (const idx of order) {
      const ex = examples[idx]!;
      for (let c = 0; c < k; c++) p[c] = bias[c]!;
      for (const b of ex.x) for (let c = 0; c < k; c++) p[c]! += w[b * k + c]! * r[b * k + c]!;
      softmax(p);
      const cw = o.classWeight?.[ex.y] ?? 1;
      for (let c = 0; c < k; c++) {
        const g = cw * (p[c]! - (c === ex.y ? 1 : 0));
        gb[c]! += g * g;
        bias[c]! -= (o.rate * g) / Math.sqrt(gb[c]!);
      }
      for (const b of ex.x) {
        for (let c = 0; c < k; c++) {
          const i = b * k + c;
          const g = cw * (p[c]! - (c === ex.y ? 1 : 0)) * r[i]! + o.l2 * w[i]!;
          g2[i]! += g * g;
          w[i]! -= (o.rate * g) / Math.sqrt(g2[i]!);
        }
      }
    }
  }
  const out = new Float64Array(B * k);
  for (let i = 0; i < out.length; i++) out[i] = w[i]! * r[i]!;
  for (let c = 0; c < k; c++) out[o.biasBucket * k + c]! += bias[c]!;
  return out;
}
