/** The finance lexicon of sentiment.ts, stemmed at load (`beat`, `beats`, `beating` are one); weights ±1, strong ±2. */

/** A small suffix stripper: plurals, -ed, -ing, a final -e, doubled final consonants. */
export function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  if (w.length > 3 && /([bdfgklmnprt])\1$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
  return w;
}

const stems = (s: string) => s.trim().split(/\s+/).map(stem).join(' ');

function weights(entries: Record<number, string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [w, list] of Object.entries(entries)) for (const word of list.trim().split(/\s+/)) out.set(stem(word), Number(w));
  return out;
}

export const WORDS = weights({
  2: `soar surge skyrocket rocket boom record-high blowout bonanza windfall`,
  1: `beat top exceed rise rose climb jump gain rally rebound recover advance up higher strong stronger robust upbeat
    upgrade outperform win won approval approve approves cleared breakthrough grow grew expand expansion
    profitable boost boosts lift lifted improve improves improvement optimism optimistic bullish buoyant best record
    highs high strength solid resilient accelerate accelerates momentum tops exceeds beats surpass surpasses rallies
    soars leaps leap spike spikes gains climbs jumps rises bounce bounces recovers rebounds upside raise raised
    dividend buyback beat-and-raise sweetens sweetened wins award awarded secures secured inflows recovery hire hiring
    milestone approved endorse endorses backs upsized oversubscribed`,
  [-1]: `fall fell drop dropped decline slip slid slide dip dips lower down weak weaker weakness miss missed
    downgrade underperform loss losses lose lost cut cuts concern concerns worry worries fear fears risk risks warn
    warns warning caution cautious bearish pressure pressured hit hurt hurts drag drags slow slows slowing slowdown
    slump sluggish soft softer disappoint disappoints disappointing disappointed delay delays delayed halt halts halted
    suspend suspends suspended recall recalls probe probes investigation lawsuit sue sues sued fine fined penalty
    scrutiny antitrust charges charged fraud layoff layoffs job-cuts redundancies outage outages disruption disrupts
    strike strikes shortage shortfall deficit default defaults downturn recession contraction contracts shrink shrinks
    shrank stall stalls stalled struggle struggles struggling headwinds volatility selloff sell-off retreat retreats
    tumble tumbles sinks sink sank sag sags ease eases eased slips falls drops declines losses fined blocked block
    blocks reject rejects rejected denied denies setback setbacks fail fails failed failure bankrupt insolvency
    resign resigns resigned ousted exit exits closes closure closures shutdown downsizing impairment writedown
    write-down writedowns charge-off delinquencies scandal breach hack hacked cyberattack flaw fault faults defect
    defects crash crashes weigh weighs weighed sour souring grim bleak gloom slash slashes slashed trims trim trimmed
    subpoena indictment indicted`,
  [-2]: `plunge plunges plunged plummet plummets plummeted tank tanks tanked crater craters collapse collapses collapsed
    tumble tumbled slump slumps slumped nosedive rout bankruptcy bankrupt chapter-11 crisis meltdown freefall wipeout`,
});

export interface Cue {
  general?: number;
  hawk?: number;
  dove?: number;
  /** The phrase negates the cue that follows it (`in no hurry to cut`, `rules out hikes`). */
  negates?: boolean;
}

function phrases(entries: [string, Cue][]): Map<string, Cue> {
  return new Map(entries.map(([p, c]) => [stems(p), c]));
}

/** Two- and three-word phrases (stemmed), checked before single words. */
export const PHRASES = phrases([
  ['beats estimates', { general: 2 }],
  ['beats expectations', { general: 2 }],
  ['tops estimates', { general: 2 }],
  ['tops expectations', { general: 2 }],
  ['above estimates', { general: 1 }],
  ['above expectations', { general: 1 }],
  ['better than expected', { general: 2 }],
  ['better-than-expected', { general: 2 }],
  ['stronger than expected', { general: 2 }],
  ['stronger-than-expected', { general: 2 }],
  ['misses estimates', { general: -2 }],
  ['misses expectations', { general: -2 }],
  ['below estimates', { general: -1 }],
  ['below expectations', { general: -1 }],
  ['worse than expected', { general: -2 }],
  ['worse-than-expected', { general: -2 }],
  ['weaker than expected', { general: -2 }],
  ['weaker-than-expected', { general: -2 }],
  ['falls short', { general: -2 }],
  ['fell short', { general: -2 }],
  ['profit warning', { general: -2 }],
  ['all-time high', { general: 1 }],
  ['all time high', { general: 1 }],
  ['record high', { general: 1 }],
  ['record low', { general: -1 }],
  ['multi-year low', { general: -1 }],
  ['two-year low', { general: -1 }],
  ['52-week low', { general: -1 }],
  ['52-week high', { general: 1 }],
  ['new high', { general: 1 }],
  ['new low', { general: -1 }],
  ['price target', {}],
  ['target price', {}],
  ['job cuts', { general: -1 }],
  ['cost cuts', { general: 0 }],
  ['cost cutting', { general: 0 }],
  ['cost-cutting', { general: 0 }],
  ['short seller', { general: -1 }],
  ['short-seller', { general: -1 }],
  ['class action', { general: -1 }],
  ['data breach', { general: -2 }],
  ['under investigation', { general: -1 }],
  ['going concern', { general: -2 }],
  ['chapter 11', { general: -2 }],
  ['files for bankruptcy', { general: -2 }],
  ['steps down', { general: -1 }],
  ['step down', { general: -1 }],
  ['wins approval', { general: 2 }],
  ['gets approval', { general: 2 }],
  ['receives approval', { general: 2 }],
  ['fda approval', { general: 1 }],
  ['upbeat forecast', { general: 2 }],
  ['strong demand', { general: 2 }],
  ['weak demand', { general: -2 }],
  ['soft demand', { general: -2 }],
  ['demand slows', { general: -2 }],
  ['sales slow', { general: -2 }],
  ['in line', { general: 0 }],
  ['in-line', { general: 0 }],
  ['no change', { general: 0 }],
  ['higher for longer', { hawk: 2 }],
  ['rate hike', { hawk: 2, general: 0 }],
  ['rate hikes', { hawk: 2 }],
  ['rate increase', { hawk: 2 }],
  ['rate rise', { hawk: 2 }],
  ['rate cut', { dove: 2 }],
  ['rate cuts', { dove: 2 }],
  ['rate reduction', { dove: 2 }],
  ['quantitative tightening', { hawk: 2 }],
  ['quantitative easing', { dove: 2 }],
  ['balance sheet runoff', { hawk: 1 }],
  ['asset purchases', { dove: 1 }],
  ['bond buying', { dove: 1 }],
  ['bond purchases', { dove: 1 }],
  ['inflation fight', { hawk: 1 }],
  ['fight inflation', { hawk: 1 }],
  ['inflation risks', { hawk: 1 }],
  ['upside risks', { hawk: 1 }],
  ['not over', { hawk: 1 }],
  ['further tightening', { hawk: 2 }],
  ['more tightening', { hawk: 2 }],
  ['further hikes', { hawk: 2 }],
  ['more hikes', { hawk: 2 }],
  ['further cuts', { dove: 2 }],
  ['more cuts', { dove: 2 }],
  ['fewer cuts', { hawk: 2 }],
  ['fewer rate cuts', { hawk: 2 }],
  ['slower easing', { hawk: 2 }],
  ['slower pace', { hawk: 1 }],
  ['delay cuts', { hawk: 2 }],
  ['delays cuts', { hawk: 2 }],
  ['pushes back', { negates: true }],
  ['push back', { negates: true }],
  ['no rush', { negates: true }],
  ['no hurry', { negates: true }],
  ['in no hurry', { negates: true }],
  ['rules out', { negates: true }],
  ['negative rates', {}],
  ['negative interest rate', {}],
  ['ends negative', { hawk: 2 }],
  ['end negative', { hawk: 2 }],
  ['exit negative', { hawk: 2 }],
  ['support growth', { dove: 1 }],
  ['support the economy', { dove: 1 }],
  ['pauses hikes', { dove: 2 }],
  ['pause hikes', { dove: 2 }],
  ['pause rate hikes', { dove: 2 }],
  ['bets on a cut', { dove: 1 }],
  ['signals cuts', { dove: 2 }],
  ['open to cutting', { dove: 2 }],
  ['door to cuts', { dove: 2 }],
  ['door open', { dove: 1 }],
  ['keeps door open', { dove: 1 }],
  ['rates on hold', {}],
  ['holds rates', {}],
  ['keeps rates', {}],
  ['leaves rates', {}],
  ['basis point', {}],
  ['basis points', {}],
]);

/** Verb + object (within four words): what is raised, cut, beaten... */
export const OBJECT_RULES = new Map<string, Map<string, Cue>>();
function objectRule(verbs: string, objects: string, cue: Cue): void {
  for (const v of verbs.split(/\s+/)) {
    const sv = stem(v);
    const m = OBJECT_RULES.get(sv) ?? new Map<string, Cue>();
    for (const o of objects.split(/\s+/)) m.set(stem(o), cue);
    OBJECT_RULES.set(sv, m);
  }
}
const UP = 'raise raises raised lift lifts lifted boost boosts boosted hike hikes hiked increase increases increased ups upped';
const DOWN = 'cut cuts lower lowers lowered reduce reduces reduced slash slashes slashed trim trims trimmed';
objectRule(UP, 'outlook guidance forecast forecasts view target estimate estimates dividend payout buyback', { general: 2 });
objectRule(DOWN, 'outlook guidance forecast forecasts view target estimate estimates dividend payout buyback rating', { general: -2 });
objectRule(DOWN, 'jobs staff workforce workers employees headcount positions', { general: -1 });
objectRule(DOWN, 'costs cost debt losses', { general: 1 });
objectRule(DOWN, 'price prices fares fees', { general: 0 });
objectRule(UP, 'price prices fares fees', { general: 0 });
objectRule(UP, 'rate rates benchmark', { hawk: 2 });
objectRule(DOWN, 'rate rates benchmark ratio requirement rrr', { dove: 2 });
objectRule(UP, 'stake', { general: 1 });
objectRule(DOWN, 'stake', { general: -1 });
objectRule('beat beats top tops exceed exceeds', 'estimates expectations forecasts consensus', { general: 2 });
objectRule('meet meets met', 'target targets estimates expectations goal goals guidance', { general: 1 });
objectRule('miss misses missed', 'estimates expectations forecasts consensus target targets', { general: -2 });
objectRule('raise raises raised', 'capital funds money', { general: 0 });
objectRule('hold holds held keep keeps kept leave leaves left maintain maintains', 'rates rate steady unchanged', {});

export const HAWKISH = new Set(['hawkish', 'tightening', 'tighten', 'tightens', 'hike', 'hikes', 'hawk', 'hawks'].map(stem));
export const DOVISH = new Set(['dovish', 'easing', 'stimulus', 'dove', 'doves', 'pivot'].map(stem));

export const NEGATORS = new Set(['not', 'no', 'never', 'without', 'nor', 'unlikely', 'fails', 'failed', 'fail', 'unable', 'refuses', 'against', 'avoids', 'averts', 'averted', 'eschews', 'resists', 'rule', 'ruled', 'rules']);
/** A clause after these weighs more (the news is usually what follows `but`). */
export const CONTRAST = new Set(['but', 'however', 'yet']);
/** A clause after these weighs less (`despite weak sales`). */
export const CONCESSIVE = new Set(['despite', 'though', 'although', 'even']);

/** Monetary-policy context: a central bank, its people, or policy-rate vocabulary (stemmed). */
export const POLICY_ACTORS = new Set(
  [
    'fed', 'fomc', 'federal reserve', 'ecb', 'european central bank', 'boe', 'bank of england', 'boj', 'bank of japan',
    'pboc', "people's bank", 'central bank', 'rba', 'reserve bank', 'snb', 'swiss national bank', 'riksbank', 'norges bank',
    'bank of canada', 'rbi', 'rbnz', 'powell', 'lagarde', 'bailey', 'ueda', 'policymakers', 'policy makers', 'rate-setters',
    'rate setters', 'central banks', 'fed officials', 'monetary policy', 'bundesbank', 'nagel', 'schnabel', 'waller', 'williams',
  ].map(stems),
);
/** One-word policy actors, unstemmed: stemmed, `Boeing` would be the BoE, `Williams` (the company) a Fed official. */
export const POLICY_ACTOR_WORDS = new Set([
  'fed', 'fomc', 'ecb', 'boe', 'boj', 'pboc', 'rba', 'snb', 'riksbank', 'rbi', 'rbnz', 'powell', "powell's", 'lagarde', "lagarde's", 'bailey', 'ueda',
  'policymakers', 'policymaker', 'rate-setters', 'bundesbank', 'nagel', 'schnabel', 'waller', "fed's", "ecb's", "boe's", "boj's", "rba's", "snb's", "rbi's",
]);
export const POLICY_TERMS = new Set(
  ['interest rate', 'interest rates', 'benchmark rate', 'policy rate', 'deposit rate', 'funds rate', 'rate hike', 'rate cut', 'rate cuts', 'rate hikes', 'reserve requirement', 'cash rate', 'bank rate', 'repo rate', 'rate path', 'rate decision']
    .map(stems),
);
