/**
 * The client outside the repository, as a partner gets it: `npm pack` the package, install the tarball
 * in a clean temporary project, and run the README's example as written against the partner mock.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type RunningMock } from '../../src/mock/index.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const sdk = join(root, 'clients', 'typescript');
const README_MOCK_URL = 'http://127.0.0.1:4010';

/** The first ```js block of a README that uses the client. */
function example(readme: string): string {
  const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes("from '@fns/client'"));
  if (!block) throw new Error('no example of @fns/client in the README');
  return block;
}

/** The ```sh blocks of a README, in order. */
function shellBlocks(readme: string): string[] {
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The README's install lines: the block that packs the workspace, split into its lines. */
function installLines(readme: string): string[] {
  const block = shellBlocks(readme).find((b) => b.includes('npm pack --workspace clients/typescript'));
  if (!block) throw new Error('no install block (npm pack --workspace clients/typescript) in the README');
  return block.trim().split('\n');
}

function sh(line: string, cwd: string): void {
  execFileSync('bash', ['-euo', 'pipefail', '-c', line], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `file` with node in `cwd`, asynchronously: the mock answers from this very process. */
function runNode(file: string, cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [file], { cwd, timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

/** The example's output: the list's contents, then three streamed articles, each with its receive time. */
function expectExampleRan(run: { status: number | null; stdout: string; stderr: string }): void {
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const lines = run.stdout.trim().split('\n');
  expect(lines.length).toBeGreaterThanOrEqual(4);
  expect(lines.slice(-3).every((l) => /^\d{4}-\d\d-\d\dT\S+Z \S/.test(l))).toBe(true);
}

const READMES = [
  ['README.md', join(root, 'README.md')],
  ['clients/typescript/README.md', join(sdk, 'README.md')],
] as const;

describe('the packed client in a clean project, installed as the READMEs say', () => {
  let dir: string;
  let app: string;
  let mock: RunningMock;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fns-sdk-'));
    mock = await startMock({ port: 0, host: '127.0.0.1', streamIntervalMs: 100 });
    // Line by line as written: the pack in the checkout, then the new project beside it; only the
    // checkout's placeholder path is filled in.
    const [pack, ...project] = installLines(readFileSync(join(root, 'README.md'), 'utf8'));
    expect(installLines(readFileSync(join(sdk, 'README.md'), 'utf8'))).toEqual([pack, ...project]);
    sh(pack!, root);
    sh(project.join('\n').replaceAll('/path/to/this/checkout', root), dir);
    app = join(dir, 'my-app');
  }, 180_000);
  afterAll(async () => {
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
    for (const f of readdirSync(root)) if (/^fns-client-.*\.tgz$/.test(f)) rmSync(join(root, f));
  });

  it('is an ES module project (npm pkg set type=module), as the READMEs say', () => {
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).type).toBe('module');
  });

  it('ships the built code and the contract types, nothing else', () => {
    const files = execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: sdk, encoding: 'utf8' });
    const paths = (JSON.parse(files)[0].files as { path: string }[]).map((f) => f.path).sort();
    expect(paths).toContain('dist/index.js');
    expect(paths).toContain('dist/index.d.ts');
    expect(paths).toContain('dist/generated/openapi.d.ts');
    expect(paths.filter((p) => p.startsWith('src/') || p.startsWith('test/'))).toEqual([]);
  });

  it.each(READMES)(
    'runs the example of %s as written, saved as try-client.js, against the mock',
    async (_name, readme) => {
      const code = example(readFileSync(readme, 'utf8'));
      expect(code).toContain(README_MOCK_URL);
      writeFileSync(join(app, 'try-client.js'), code.replace(README_MOCK_URL, mock.url));
      expectExampleRan(await runNode('try-client.js', app));
    },
    90_000,
  );

  it('type-checks a partner program against the packed declarations', () => {
    writeFileSync(
      join(app, 'check.ts'),
      [
        "import { FnsClient, FnsProblem, type Article, type NewsList } from '@fns/client';",
        "const fns = new FnsClient({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'fns_test_max' });",
        "const page: Promise<NewsList> = fns.listNews({ limit: 5, tickers: ['AAPL'] });",
        'const first = async (): Promise<Article | undefined> => (await page).articles[0];',
        'void first; void FnsProblem;',
        '// @ts-expect-error: urgency is an enum of the contract',
        "void fns.listNews({ urgency: 'soon' });",
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        files: ['check.ts'],
      }),
    );
    const tsc = spawnSync(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
      { cwd: app, encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});

describe('the client inside the checkout, after npm run build:sdk (an npm workspace)', () => {
  let mock: RunningMock;
  const here = join(root, 'node_modules', '.cache', 'fns-sdk-readme');
  beforeAll(async () => {
    mock = await startMock({ port: 0, host: '127.0.0.1', streamIntervalMs: 100 });
    const build = shellBlocks(readFileSync(join(root, 'README.md'), 'utf8')).find(
      (b) => b.trim() === 'npm run build:sdk',
    );
    expect(build, 'the README shows `npm run build:sdk` as a block of its own').toBeDefined();
    sh(build!.trim(), root);
    mkdirSync(here, { recursive: true });
  }, 180_000);
  afterAll(async () => {
    await mock?.close();
    rmSync(here, { recursive: true, force: true });
  });

  it('resolves @fns/client from a .js file in the checkout and runs the README example', async () => {
    const code = example(readFileSync(join(root, 'README.md'), 'utf8'));
    writeFileSync(join(here, 'try-client.js'), code.replace(README_MOCK_URL, mock.url));
    expectExampleRan(await runNode('try-client.js', here));
  }, 90_000);
});
