/**
 * Outside text printed by `fns` (real processes): a feed server's reason phrase, a webhook receiver's
 * answer, an ingested headline and an input's field name carry terminal escape sequences and CR LF.
 * Whatever the command, the output holds no raw control character and no line the text forged; the
 * text is shown escaped (`\x1b`, `\r\n`), JSON output stays the same JSON value.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { fnsBin, fnsWith, tempDataDir } from './support.js';

/** What a hostile feed, receiver or input carries: a window title, a screen clear, a forged line. */
const HOSTILE = 'Rates \x1b]0;pwned\x07 \x1b[2J cut\r\nfns: forged line\u2028\u202e';
/** Every character a terminal acts on but the output's own line feeds. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** The output is inert: no raw control character, no line that the outside text started. */
function expectInert(output: string): void {
  expect(output).not.toMatch(RAW);
  expect(output).not.toMatch(/^fns: forged/m);
}

const data = tempDataDir('fns-terminal-');
const ADMIN_TOKEN = 'terminal-test-token-0123456789';
const env = {
  ADMIN_PORT: '0',
  ADMIN_TOKEN,
  WEBHOOK_ALLOW_PRIVATE: 'true',
  FEED_ALLOW_PRIVATE: 'true',
  PORT: '0',
  HOST: '127.0.0.1',
  EMBEDDINGS_URL: 'http://127.0.0.1:9/v1/embeddings',
  EMBEDDINGS_MODEL: 'unused',
};
const fns = (...args: string[]) => fnsWith({ dataDir: data.dir, env }, ...args);
const fnsInput = (input: string, ...args: string[]) => fnsWith({ dataDir: data.dir, env, input }, ...args);
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  data.remove();
});

/** A long-running `fns` command; resolves once its output matches `ready`. */
async function start(
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; stdout: () => string; stderr: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [fnsBin, ...args], {
    env: { ...process.env, ...env, DATA_DIR: data.dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  cleanups.push(stop);
  let stdout = '';
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const check = () => (ready.test(stdout + stderr) ? resolve() : undefined);
    child.stdout!.on('data', (d) => ((stdout += d), check()));
    child.stderr!.on('data', (d) => ((stderr += d), check()));
    child.once('exit', (code) => reject(new Error(`fns ${args.join(' ')} exited ${code}: ${stdout}${stderr}`)));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, stop };
}

describe('fns articles ingest and show: pushed and ingested text is shown escaped, one field per line', () => {
  it('ingest notes a bad line whose field name is hostile on one escaped line', async () => {
    const lines = `${JSON.stringify({ content: 'fine', [`x${HOSTILE}`]: 1 })}\n`;
    const ingested = await fnsInput(lines, 'articles', 'ingest', '-', '--json');
    expect(ingested.code).toBe(1);
    expectInert(ingested.stdout);
    expectInert(ingested.stderr);
    expect(ingested.stderr).toContain(
      'line 1: unknown field(s): xRates \\x1b]0;pwned\\x07 \\x1b[2J cut\\r\\nfns: forged line\\u2028\\u202e',
    );
  }, 60_000);

  it('show escapes what a push to the running service stored: content, the id at the source', async () => {
    const serve = await start(['serve'], /admin listener on (http:\/\/\S+)/);
    const admin = /admin listener on (http:\/\/\S+)/.exec(serve.stdout())![1]!;
    const pushed = await fetch(`${admin}/admin/v1/articles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      body: `${JSON.stringify({ source: 'wire', id: HOSTILE, content: HOSTILE })}\n`,
    });
    const answer = (await pushed.json()) as { results: { status: string; id: string }[] };
    await serve.stop();
    expect(answer.results[0]!.status).toBe('stored');
    const id = answer.results[0]!.id;

    const shown = await fns('articles', 'show', id);
    expect(shown.code).toBe(0);
    expectInert(shown.stdout);
    // Stored content is one line of plain text already (domain/text.ts); what is left of it is escaped.
    expect(shown.stdout).toMatch(/^content: +Rates .*\\u202e$/m);
    expect(shown.stdout).toContain(
      '  wire  Rates \\x1b]0;pwned\\x07 \\x1b[2J cut\\r\\nfns: forged line\\u2028\\u202e  ',
    );

    // JSON stays JSON: the same value, nothing a terminal acts on.
    const json = await fns('articles', 'show', id, '--json');
    expectInert(json.stdout);
    expect((JSON.parse(json.stdout) as { items: { external_id: string }[] }).items[0]!.external_id).toBe(HOSTILE);
  }, 60_000);
});

describe("fns sources run and list: a feed server's reason phrase is shown escaped", () => {
  it('prints the failed poll and the last error with the escape sequences escaped', async () => {
    // A feed server whose status line carries ESC, BEL and a C1 CSI (bytes Node's parser lets through).
    const feed: NetServer = createNetServer((s) => {
      s.once('data', () => {
        const reason = Buffer.concat([
          Buffer.from('Bad \x1b]0;pwned\x07 \x1b[2J'),
          Buffer.from([0x9b, 0x33, 0x31, 0x6d]),
        ]);
        s.end(
          Buffer.concat([
            Buffer.from('HTTP/1.1 503 '),
            reason,
            Buffer.from('\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'),
          ]),
        );
      });
      s.on('error', () => {});
    });
    feed.listen(0, '127.0.0.1');
    await once(feed, 'listening');
    cleanups.push(() => new Promise((r) => feed.close(r)));
    const port = (feed.address() as { port: number }).port;
    expect((await fns('sources', 'add', 'hostile', `http://127.0.0.1:${port}/feed.xml`, '--every', '1s')).code).toBe(0);

    const runner = await start(['sources', 'run'], /^hostile: .*HTTP 503/m);
    await runner.stop();
    expectInert(runner.stdout());
    expectInert(runner.stderr());
    expect(runner.stdout()).toMatch(/^hostile: .*Bad \\x1b\]0;pwned\\x07 \\x1b\[2J\\x9b31m/m);

    const listed = await fns('sources', 'list');
    expectInert(listed.stdout);
    expect(listed.stdout).toMatch(/^ {2}last error: .*Bad \\x1b\]0;pwned\\x07 \\x1b\[2J\\x9b31m/m);
    const json = await fns('sources', 'list', '--json');
    expectInert(json.stdout);
    expect((JSON.parse(json.stdout) as { sources: { last_error: string }[] }).sources[0]!.last_error).toContain(
      'Bad \x1b]0;pwned\x07 \x1b[2J\u009b31m',
    );
  }, 60_000);
});

describe("fns webhooks send-test and list: a receiver's answer is shown escaped", () => {
  it('send-test and list print the answer body with its escape sequences escaped', async () => {
    const receiver: HttpServer = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end(`nope ${HOSTILE}`));
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    cleanups.push(() => {
      receiver.closeAllConnections();
      return new Promise((r) => receiver.close(r));
    });
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const account = (
      JSON.parse((await fns('accounts', 'create', '--tier', 'pro', '--json')).stdout) as { account_id: string }
    ).account_id;
    const id = (JSON.parse((await fns('webhooks', 'add', account, url, '--json')).stdout) as { id: string }).id;

    const sent = await fns('webhooks', 'send-test', id);
    expect(sent.code).toBe(1);
    expectInert(sent.stdout);
    expect(sent.stdout).toContain('\\x1b]0;pwned\\x07 \\x1b[2J cut');

    // The service's dispatcher records the answer as the endpoint's last error.
    const serve = await start(['serve'], /listening on/);
    await fnsInput(`${JSON.stringify({ content: 'Copper rallies on supply fears' })}\n`, 'articles', 'ingest', '-');
    for (;;) {
      const l = JSON.parse((await fns('webhooks', 'list', '--json')).stdout) as {
        webhooks: { last_error: string | null }[];
      };
      if (l.webhooks[0]!.last_error !== null) break;
    }
    await serve.stop();
    const listed = await fns('webhooks', 'list');
    expectInert(listed.stdout);
    expect(listed.stdout).toMatch(/^ {2}last error: .*\\x1b\]0;pwned\\x07 \\x1b\[2J cut/m);
  }, 90_000);
});
