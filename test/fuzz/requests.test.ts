/**
 * Property-based request fuzzing against the real REST app in-process (see harness.ts for the
 * properties). Fixed seed and 2,000 cases by default; FUZZ_SEED / FUZZ_RUNS override them (the
 * rate-limit sequences run FUZZ_RUNS / 20). `npm run fuzz` runs the same properties with a random seed.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import fc from 'fast-check';
import { fuzzCaseArb, rateCaseArb } from './arbitraries.js';
import { FuzzHarness, runParameters } from './harness.js';

const { runs, rateRuns, seed } = runParameters(process.env, { runs: 2000, seed: 20261121 });
// Generous for slow machines; the default run takes about 15 s on 2 cores.
const timeout = 60_000 + runs * 100;

let h: FuzzHarness;
beforeAll(async () => {
  h = await FuzzHarness.start();
});
afterAll(async () => {
  await h?.close();
  const c = h.stats.checked;
  console.log(
    `fuzz: seed ${seed}, ${h.stats.cases} cases + ${h.stats.rateCases} rate-limit sequences, ${h.stats.requests} requests; ` +
      `${c.twinComparisons} twin comparisons, ${c.expected400} expected 400s, ${c.expected200} expected 200s, ${c.namesParameter} 400 details, ` +
      `${c.rateWindowChecks} admissions counted, ${h.stats.ipBlocks} IP blocks, ${h.stats.rateLimited} 429s`,
  );
});

describe(`request fuzzing (seed ${seed})`, () => {
  it(
    `${runs} generated requests: no 5xx, contract-valid answers, odd request lines validated like the plain path, every 400 names a parameter, no over-admission`,
    { timeout },
    async () => {
      await fc.assert(
        fc.asyncProperty(fuzzCaseArb, (c) => h.runCase(c)),
        { seed, numRuns: runs },
      );
    },
  );

  it(
    `${rateRuns} rate-limit sequences: never more admitted in any 60 s of the fake clock than the plan allows`,
    { timeout },
    async () => {
      await fc.assert(
        fc.asyncProperty(rateCaseArb, (c) => h.runRateCase(c)),
        { seed, numRuns: rateRuns },
      );
    },
  );
});
