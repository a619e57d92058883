/**
 * The client outside the repository, as a partner gets it: `npm pack` the package, install the tarball
 * in a clean temporary project, and run the README's example as written against the partner mock.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

describe('the packed client in a clean project', () => {
  let dir: string;
  let mock: RunningMock;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fns-sdk-'));
    mock = await startMock({ port: 0, host: '127.0.0.1', streamIntervalMs: 100 });
    execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: sdk, stdio: ['ignore', 'pipe', 'pipe'] });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'partner-app', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', `./${tarball}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  }, 180_000);
  afterAll(async () => {
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ships the built code and the contract types, nothing else', () => {
    const files = execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: sdk, encoding: 'utf8' });
    const paths = (JSON.parse(files)[0].files as { path: string }[]).map((f) => f.path).sort();
    expect(paths).toContain('dist/index.js');
    expect(paths).toContain('dist/index.d.ts');
    expect(paths).toContain('dist/generated/openapi.d.ts');
    expect(paths.filter((p) => p.startsWith('src/') || p.startsWith('test/'))).toEqual([]);
  });

  it.each([
    ['clients/typescript/README.md', join(sdk, 'README.md')],
    ['README.md', join(root, 'README.md')],
  ])('runs the example of %s as written against the mock', async (_name, readme) => {
    const code = example(readFileSync(readme, 'utf8'));
    expect(code).toContain(README_MOCK_URL);
    writeFileSync(join(dir, 'example.mjs'), code.replace(README_MOCK_URL, mock.url));
    // Asynchronously: the mock answers from this very process.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, ['example.mjs'], { cwd: dir, timeout: 60_000 });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c));
      child.stderr.on('data', (c: Buffer) => (stderr += c));
      child.on('close', (status) => done({ status, stdout, stderr }));
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    // The list's contents, then three streamed articles, each with its receive time.
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.slice(-3).every((l) => /^\d{4}-\d\d-\d\dT\S+Z \S/.test(l))).toBe(true);
  }, 90_000);

  it('type-checks a partner program against the packed declarations', () => {
    writeFileSync(
      join(dir, 'check.ts'),
      [
        "import { FnsClient, FnsProblem, type Article, type NewsList } from '@fns/client';",
        "const fns = new FnsClient({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'fns_test_max' });",
        'const page: Promise<NewsList> = fns.listNews({ limit: 5, tickers: [\'AAPL\'] });',
        "const first = async (): Promise<Article | undefined> => (await page).articles[0];",
        'void first; void FnsProblem;',
        '// @ts-expect-error: urgency is an enum of the contract',
        "void fns.listNews({ urgency: 'soon' });",
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: [] }, files: ['check.ts'] }));
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});
