/**
 * `npm run fuzz`: the request-fuzzing properties of test/fuzz with a random seed and 20,000 cases
 * (plus 1,000 rate-limit sequences), against the REST app in-process. Prints progress, then the
 * totals (cases, requests, statuses per operation, time); on a failure, the seed, the shrunk
 * counterexample and what came back, and exits 1.
 *
 *   npm run fuzz                                  # random seed, 20,000 cases
 *   npm run fuzz -- --seed 123 --runs 2000        # replay a run (FUZZ_SEED / FUZZ_RUNS work too)
 *   npm run fuzz -- --all-classes                 # do not stop at the first failure class: shrink one
 *                                                 # counterexample per class, then look for the next
 */
import fc from 'fast-check';
import { fuzzCaseArb, rateCaseArb } from '../test/fuzz/arbitraries.js';
import { FuzzFailure, FuzzHarness, runParameters } from '../test/fuzz/harness.js';

function parseArgs(argv: string[]): { env: NodeJS.ProcessEnv; allClasses: boolean; maxClasses: number } {
  const env = { ...process.env };
  let allClasses = false;
  let maxClasses = 40;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--seed') env.FUZZ_SEED = argv[++i];
    else if (a === '--runs') env.FUZZ_RUNS = argv[++i];
    else if (a === '--all-classes') allClasses = true;
    else if (a === '--max-classes') maxClasses = Number(argv[++i]);
    else if (a === '--help' || a === '-h') {
      console.log('usage: npm run fuzz -- [--seed N] [--runs N] [--all-classes] [--max-classes N]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (try --help)`);
  }
  return { env, allClasses, maxClasses };
}

const { env, allClasses, maxClasses } = parseArgs(process.argv.slice(2));
const { runs, rateRuns, seed } = runParameters(env, { runs: 20_000 });
console.log(
  `fuzz: seed ${seed}, ${runs} cases + ${rateRuns} rate-limit sequences${allClasses ? ', all failure classes' : ''}`,
);
console.log(`      replay with: npm run fuzz -- --seed ${seed} --runs ${runs}`);

const h = await FuzzHarness.start();
const started = performance.now();
const found: { property: string; failureClass: string; report: string }[] = [];
const ignored = new Set<string>();
h.ignore = (cls) => ignored.has(cls);

const secs = () => ((performance.now() - started) / 1000).toFixed(1);
let done = 0;
const progressEvery = Math.max(100, Math.round(runs / 20));

async function check<T>(
  name: string,
  arb: fc.Arbitrary<T>,
  numRuns: number,
  run: (c: T) => Promise<void>,
): Promise<void> {
  for (;;) {
    done = 0;
    const details = await fc.check(
      fc.asyncProperty(arb, async (c) => {
        await run(c);
        if (++done % progressEvery === 0)
          console.log(`  ${name}: ${done}/${numRuns} (${h.stats.requests} requests, ${secs()} s)`);
      }),
      { seed, numRuns },
    );
    if (!details.failed) return;
    const err = details.errorInstance;
    const failureClass = err instanceof FuzzFailure ? err.failureClass : 'harness-error';
    const report = `${(fc.defaultReportMessage(details) ?? '').replace(/\nHint: .*$/s, '')}\n${err instanceof Error ? err.message : String(err)}`;
    found.push({ property: name, failureClass, report });
    console.log(
      `\nFAILED ${name} — class ${failureClass}\nseed ${seed}, path ${details.counterexamplePath}\n${report}\n`,
    );
    if (!allClasses || failureClass === 'harness-error' || ignored.has(failureClass) || found.length >= maxClasses)
      return;
    ignored.add(failureClass);
    console.log(`  (--all-classes: ignoring ${failureClass} from now on and running again)\n`);
  }
}

try {
  await check('requests', fuzzCaseArb, runs, (c) => h.runCase(c));
  await check('rate-limit sequences', rateCaseArb, rateRuns, (c) => h.runRateCase(c));
} finally {
  await h.close();
}

const s = h.stats;
console.log(`\n=== totals (seed ${seed}) ===`);
console.log(
  `cases: ${s.cases} request cases + ${s.rateCases} rate-limit sequences (runs include re-runs and shrinking)`,
);
console.log(`requests: ${s.requests} in ${secs()} s; IP blocks seen: ${s.ipBlocks}; 429s: ${s.rateLimited}`);
console.log('statuses per operation:');
for (const [op, m] of Object.entries(s.statuses).sort()) {
  console.log(
    `  ${op.padEnd(24)} ${Object.entries(m)
      .map(([st, n]) => `${st}×${n}`)
      .join('  ')}`,
  );
}
console.log(
  `request-line forms: ${Object.entries(s.forms)
    .sort((a, b) => b[1] - a[1])
    .map(([f, n]) => `${f} ${n}`)
    .join(', ')}`,
);
console.log(
  `key states: ${Object.entries(s.keyStates)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}`,
);
console.log(
  `parameter verdicts (contract): ${Object.entries(s.verdicts)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}`,
);
const c = s.checked;
console.log(
  `checked: ${c.twinComparisons} odd spellings against their plain twin, ${c.expected400} admitted requests the contract makes a 400, ${c.expected200} it makes a 200, ${c.namesParameter} 400 details for a parameter name, ${c.rateWindowChecks} admissions against the plan's window`,
);
if (Object.keys(s.ignored).length)
  console.log(
    `failures of already reported classes: ${Object.entries(s.ignored)
      .map(([k, n]) => `${k} ×${n}`)
      .join(', ')}`,
  );
if (found.length) {
  console.log(`\n${found.length} failure class(es), seed ${seed}:`);
  for (const f of found) console.log(`  - ${f.property}: ${f.failureClass}`);
  process.exitCode = 1;
} else {
  console.log('\nall properties hold');
}
