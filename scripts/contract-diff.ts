/**
 * `npm run contract:diff`: the breaking-change gate. Compares the contract as generated now
 * (generated/openapi.json, generated/asyncapi.json, bundled by `npm run generate`) with the last
 * released copy (contract/released/), lists every additive change, fails on any breaking one, and checks
 * that `info.version` and contract/CHANGELOG.md follow the rules (scripts/lib/contract-diff.ts).
 *
 *   npm run contract:diff               check (CI runs this through `npm test`)
 *   npm run contract:diff -- --json     the same, as JSON on stdout
 *   npm run contract:diff -- --release  after the check passes, record the current contract as released
 */
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { diffAsyncApi, diffOpenApi, versionProblems, type ContractDiff } from './lib/contract-diff.js';
import { staleGenerated } from '../src/contract/freshness.js';

export const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

interface Report {
  file: string;
  released: string;
  current: string;
  diff: ContractDiff;
  problems: string[];
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
const versionOf = (doc: Record<string, unknown>) => String((doc.info as { version?: unknown } | undefined)?.version);

/** The gate over one repository root: the reports and every problem found. */
export function checkContract(dir: string): { reports: Report[]; problems: string[] } {
  const problems: string[] = [];
  const stale = staleGenerated(dir);
  if (stale) return { reports: [], problems: [stale] };
  const changelog = existsSync(join(dir, 'contract', 'CHANGELOG.md'))
    ? readFileSync(join(dir, 'contract', 'CHANGELOG.md'), 'utf8')
    : '';
  const reports: Report[] = [];
  for (const [file, bundle, diff] of [
    ['openapi.yaml', 'openapi.json', diffOpenApi],
    ['asyncapi.yaml', 'asyncapi.json', diffAsyncApi],
  ] as const) {
    const releasedPath = join(dir, 'contract', 'released', bundle);
    if (!existsSync(releasedPath)) {
      problems.push(
        `contract/released/${bundle} is missing: record the released contract with \`npm run contract:diff -- --release\``,
      );
      continue;
    }
    const before = read(releasedPath);
    const after = read(join(dir, 'generated', bundle));
    const d = diff(before, after);
    const released = versionOf(before);
    const current = versionOf(after);
    const own = versionProblems(released, current, d, file);
    if (
      current !== released &&
      !new RegExp(`^## ${file.replace('.', '\\.')} ${current.replace(/\./g, '\\.')}\\b`, 'm').test(changelog)
    ) {
      own.push(`${file}: contract/CHANGELOG.md has no "## ${file} ${current}" section listing the changes`);
    }
    reports.push({ file, released, current, diff: d, problems: own });
    problems.push(...own);
  }
  return { reports, problems };
}

function main(): void {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--json' && a !== '--release');
  if (unknown.length) {
    process.stderr.write(`contract:diff: unknown option ${unknown[0]} (use --json or --release)\n`);
    process.exit(2);
  }
  const { reports, problems } = checkContract(root);
  if (args.includes('--json')) process.stdout.write(JSON.stringify({ reports, problems }, null, 2) + '\n');
  else {
    for (const r of reports) {
      process.stdout.write(
        `${r.file}: released ${r.released}, now ${r.current}: ${r.diff.additive.length} additive, ${r.diff.breaking.length} breaking\n`,
      );
      for (const c of r.diff.additive) process.stdout.write(`  + ${c.where}: ${c.message}\n`);
      for (const c of r.diff.breaking) process.stdout.write(`  ! ${c.where}: ${c.message}\n`);
    }
    for (const p of problems) process.stderr.write(`contract:diff: ${p}\n`);
    if (!problems.length)
      process.stdout.write('contract:diff: no breaking change; versions and changelog follow the rules\n');
  }
  if (problems.length) process.exit(1);
  if (args.includes('--release')) {
    for (const bundle of ['openapi.json', 'asyncapi.json'])
      copyFileSync(join(root, 'generated', bundle), join(root, 'contract', 'released', bundle));
    process.stdout.write('contract:diff: contract/released/ now holds the current contract\n');
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
