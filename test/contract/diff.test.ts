/**
 * The breaking-change gate (`npm run contract:diff`, scripts/lib/contract-diff.ts): each kind of breaking change
 * it must refuse is caught on a real before/after pair (the released contract and a copy changed in
 * one way), additive changes pass and are listed, and the version rules hold.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { diffAsyncApi, diffOpenApi, versionProblems, type ContractDiff } from '../../scripts/lib/contract-diff.js';
import { checkContract } from '../../scripts/contract-diff.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
type Doc = any;
const released = (file: string): Doc => JSON.parse(readFileSync(join(root, 'contract', 'released', file), 'utf8'));
const openapi = () => released('openapi.json');
const asyncapi = () => released('asyncapi.json');

function changedOpenApi(edit: (doc: Doc) => void): ContractDiff {
  const after = openapi();
  edit(after);
  return diffOpenApi(openapi(), after);
}
function changedAsyncApi(edit: (doc: Doc) => void): ContractDiff {
  const after = asyncapi();
  edit(after);
  return diffAsyncApi(asyncapi(), after);
}
const messages = (d: ContractDiff['breaking']) => d.map((c) => `${c.where}: ${c.message}`);
const param = (doc: Doc, name: string) => doc.components.parameters[name];

describe('the released contract against itself', () => {
  it('has no change at all', () => {
    expect(diffOpenApi(openapi(), openapi())).toEqual({ breaking: [], additive: [] });
    expect(diffAsyncApi(asyncapi(), asyncapi())).toEqual({ breaking: [], additive: [] });
  });

  it('is what the repository holds now, or differs from it only by what the rules allow', () => {
    expect(checkContract(root).problems).toEqual([]);
  });
});

describe('breaking: something a client uses is removed or renamed', () => {
  it('a path removed', () => {
    const d = changedOpenApi((doc) => delete doc.paths['/v1/account/usage']);
    expect(messages(d.breaking)).toEqual(['/v1/account/usage: path removed']);
  });

  it('a path renamed (removed under its old name)', () => {
    const d = changedOpenApi((doc) => {
      doc.paths['/v1/usage'] = doc.paths['/v1/account/usage'];
      delete doc.paths['/v1/account/usage'];
    });
    expect(messages(d.breaking)).toEqual(['/v1/account/usage: path removed']);
    expect(messages(d.additive)).toEqual(['/v1/usage: path added']);
  });

  it('an operation renamed (generated clients call it by its operationId)', () => {
    const d = changedOpenApi((doc) => (doc.paths['/v1/news'].get.operationId = 'getNews'));
    expect(messages(d.breaking)).toEqual([
      'GET /v1/news: operationId renamed from listNews to getNews (generated clients use it)',
    ]);
  });

  it('a parameter removed', () => {
    const d = changedOpenApi(
      (doc) => (doc.paths['/v1/news'].get.parameters = doc.paths['/v1/news'].get.parameters.slice(0, 2)),
    );
    expect(messages(d.breaking)).toEqual(['GET /v1/news › parameter query urgency: parameter removed']);
  });

  it('a parameter renamed', () => {
    const d = changedOpenApi((doc) => (param(doc, 'Since').name = 'from'));
    expect(messages(d.breaking)).toEqual(['GET /v1/news › parameter query since: parameter removed']);
    expect(messages(d.additive)).toEqual(['GET /v1/news › parameter query from: new optional parameter']);
  });

  it('a response field removed', () => {
    const d = changedOpenApi((doc) => delete doc.components.schemas.Article.properties.published_at);
    expect(d.breaking.map((c) => c.message)).toContain('response field removed');
    expect(d.breaking.every((c) => c.where.endsWith('published_at'))).toBe(true);
  });

  it('a response removed', () => {
    const d = changedOpenApi((doc) => delete doc.paths['/v1/news'].get.responses['429']);
    expect(messages(d.breaking)).toEqual(['GET /v1/news › response 429: response removed']);
  });

  it('a response header removed', () => {
    const d = changedOpenApi((doc) => {
      const headers = doc.paths['/v1/news'].get.responses['200'].headers;
      delete headers[Object.keys(headers)[0]!];
    });
    expect(d.breaking.map((c) => c.message)).toEqual(['response header removed']);
  });

  it('an enum value removed', () => {
    const d = changedOpenApi(
      (doc) => (doc.components.schemas.Urgency.enum = doc.components.schemas.Urgency.enum.slice(1)),
    );
    expect(d.breaking.length).toBeGreaterThan(0);
    expect(d.breaking.every((c) => /enum value "\w+" removed/.test(c.message))).toBe(true);
  });

  it('a stream message field removed', () => {
    const d = changedAsyncApi((doc) => delete doc.components.schemas.Article.properties.urgency);
    expect(messages(d.breaking)).toEqual(['channel stream › message article › urgency: response field removed']);
  });

  it('a stream close code removed', () => {
    const d = changedAsyncApi((doc) => delete doc['x-stream'].closeCodes.slowConsumer);
    expect(messages(d.breaking)).toEqual(['close code slowConsumer: close code removed']);
  });

  it('a channel moved', () => {
    const d = changedAsyncApi((doc) => (doc.channels.stream.address = '/v2/stream'));
    expect(messages(d.breaking)).toEqual(['channel stream: address changed from /v1/stream to /v2/stream']);
  });
});

describe('breaking: a request rule narrowed or a new requirement', () => {
  it('a parameter type narrowed (a smaller maximum)', () => {
    const d = changedOpenApi((doc) => (param(doc, 'ListLimit').schema.maximum = 50));
    expect(messages(d.breaking)).toEqual([
      'GET /v1/news › parameter query limit: maximum 100 → 50 (request accepts less)',
    ]);
  });

  it('a parameter pattern changed', () => {
    const d = changedOpenApi((doc) => (param(doc, 'Query').schema.pattern = '^[a-z ]+$'));
    expect(d.breaking.map((c) => c.message)).toEqual([expect.stringMatching(/^pattern changed from/)]);
  });

  it('a new required parameter', () => {
    const d = changedOpenApi((doc) =>
      doc.paths['/v1/news'].get.parameters.push({
        name: 'region',
        in: 'query',
        required: true,
        schema: { type: 'string' },
      }),
    );
    expect(messages(d.breaking)).toEqual(['GET /v1/news › parameter query region: new required parameter']);
  });

  it('a parameter made required', () => {
    const d = changedOpenApi((doc) => (param(doc, 'Since').required = true));
    expect(messages(d.breaking)).toEqual(['GET /v1/news › parameter query since: parameter made required']);
  });

  it('a new required field in a request body', () => {
    const body = (doc: Doc, required: string[]) => {
      doc.paths['/v1/alerts'] = {
        post: {
          operationId: 'createAlert',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required,
                  properties: { q: { type: 'string' }, tickers: { type: 'array', items: { type: 'string' } } },
                },
              },
            },
          },
          responses: { '201': { description: 'created' } },
        },
      };
    };
    const before = openapi();
    body(before, ['q']);
    const after = openapi();
    body(after, ['q', 'tickers']);
    expect(messages(diffOpenApi(before, after).breaking)).toEqual([
      'POST /v1/alerts › request body › application/json › tickers: request field made required',
    ]);
  });

  it('a new required stream connection parameter', () => {
    const d = changedAsyncApi((doc) => {
      const query = doc.channels.stream.bindings.ws.query;
      query.properties.region = { type: 'string' };
      query.required = ['region'];
    });
    expect(messages(d.breaking)).toEqual(['channel stream › query › region: new required request field']);
  });
});

describe('breaking: a response rule widened', () => {
  it('a response type widened', () => {
    const d = changedOpenApi((doc) => (doc.components.schemas.NewsList.properties.count.type = ['integer', 'string']));
    expect(d.breaking.map((c) => c.message)).toEqual(['type string now allowed (response may now carry more)']);
  });

  it('a response field no longer required', () => {
    const d = changedOpenApi((doc) => (doc.components.schemas.Usage.required = ['tier', 'rate_limit']));
    expect(messages(d.breaking)).toEqual([
      'GET /v1/account/usage › response 200 › application/json › period_end: response field no longer required (may now be absent)',
    ]);
  });
});

describe('additive changes pass and are listed', () => {
  // The shape of this project's own planned additions: a cursor parameter, a field in the list body, a
  // new endpoint, a stream resume parameter.
  const additions = (doc: Doc) => {
    doc.paths['/v1/news'].get.parameters.push({
      name: 'after',
      in: 'query',
      required: false,
      schema: { type: 'string', minLength: 26, maxLength: 26 },
    });
    doc.components.schemas.NewsList.properties.next = { type: ['string', 'null'] };
    doc.paths['/v1/news/{id}'] = { get: { operationId: 'getArticle', responses: { '200': { description: 'ok' } } } };
    param(doc, 'ListLimit').schema.maximum = 200;
  };

  it('finds no breaking change and lists each addition', () => {
    const d = changedOpenApi(additions);
    expect(d.breaking).toEqual([]);
    expect(messages(d.additive)).toEqual([
      'GET /v1/news › parameter query limit: maximum 100 → 200 (request accepts more)',
      'GET /v1/news › parameter query after: new optional parameter',
      'GET /v1/news › response 200 › application/json › next: new optional response field',
      '/v1/news/{id}: path added',
    ]);
  });

  it('a stream resume parameter is additive', () => {
    const d = changedAsyncApi((doc) => (doc.channels.stream.bindings.ws.query.properties.after = { type: 'string' }));
    expect(d.breaking).toEqual([]);
    expect(messages(d.additive)).toEqual(['channel stream › query › after: new optional request field']);
  });
});

describe('info.version follows the diff', () => {
  const none: ContractDiff = { breaking: [], additive: [] };
  const added: ContractDiff = { breaking: [], additive: [{ where: 'x', message: 'y' }] };
  const broke: ContractDiff = { breaking: [{ where: 'x', message: 'y' }], additive: [] };

  it('additive changes need a minor bump', () => {
    expect(versionProblems('1.0.0', '1.0.0', added, 'openapi.yaml')).toEqual([
      expect.stringMatching(/need a minor version above 1\.0\.0, e\.g\. 1\.1\.0/),
    ]);
    expect(versionProblems('1.0.0', '1.0.1', added, 'openapi.yaml')).toHaveLength(1);
    expect(versionProblems('1.0.0', '1.1.0', added, 'openapi.yaml')).toEqual([]);
  });

  it('a breaking change is refused whatever the version', () => {
    expect(versionProblems('1.0.0', '2.0.0', broke, 'openapi.yaml')).toEqual([
      expect.stringMatching(/1 breaking change/),
    ]);
  });

  it('no change keeps the version or bumps the patch, never the minor or major', () => {
    expect(versionProblems('1.0.0', '1.0.0', none, 'openapi.yaml')).toEqual([]);
    expect(versionProblems('1.0.0', '1.0.1', none, 'openapi.yaml')).toEqual([]);
    expect(versionProblems('1.0.0', '1.1.0', none, 'openapi.yaml')).toHaveLength(1);
    expect(versionProblems('1.0.0', '2.0.0', none, 'openapi.yaml')).toHaveLength(1);
    expect(versionProblems('1.2.0', '1.1.9', none, 'openapi.yaml')).toHaveLength(1);
  });
});

describe('the gate over a repository', () => {
  it('fails on a breaking change and on an additive change without a version bump and changelog entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fns-contract-diff-'));
    try {
      for (const p of ['contract', 'generated']) cpSync(join(root, p), join(dir, p), { recursive: true });
      // As if the current contract had just been released (`--release`).
      for (const f of ['openapi.json', 'asyncapi.json'])
        cpSync(join(dir, 'generated', f), join(dir, 'contract', 'released', f));
      // Without the YAML sources, generated/ is the contract (nothing to compare for freshness).
      const bundle = join(dir, 'generated', 'openapi.json');
      const doc = JSON.parse(readFileSync(bundle, 'utf8'));
      const [major, minor] = String(doc.info.version).split('.').map(Number) as [number, number];
      const bumped = `${major}.${minor + 1}.0`;
      expect(checkContract(dir).problems).toEqual([]);
      doc.paths['/v1/news'].get.parameters.push({ name: 'region', in: 'query', schema: { type: 'string' } });
      writeFileSync(bundle, JSON.stringify(doc));
      expect(checkContract(dir).problems).toEqual([
        expect.stringMatching(
          new RegExp(
            `^openapi\\.yaml: 1 additive change\\(s\\) need a minor version above ${doc.info.version.replace(/\./g, '\\.')}`,
          ),
        ),
      ]);
      doc.info.version = bumped;
      writeFileSync(bundle, JSON.stringify(doc));
      expect(checkContract(dir).problems).toEqual([
        `openapi.yaml: contract/CHANGELOG.md has no "## openapi.yaml ${bumped}" section listing the changes`,
      ]);
      writeFileSync(
        join(dir, 'contract', 'CHANGELOG.md'),
        `${readFileSync(join(dir, 'contract', 'CHANGELOG.md'), 'utf8')}\n## openapi.yaml ${bumped}\n\nAdded \`region\`.\n`,
      );
      expect(checkContract(dir).problems).toEqual([]);
      delete doc.paths['/v1/account/usage'];
      writeFileSync(bundle, JSON.stringify(doc));
      expect(checkContract(dir).problems).toEqual([expect.stringMatching(/^openapi\.yaml: 1 breaking change/)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('webhooks: the body is what a receiver receives', () => {
  const current = (): Doc => JSON.parse(readFileSync(join(root, 'generated', 'openapi.json'), 'utf8'));
  const withHook = (edit: (doc: Doc) => void): ContractDiff => {
    const after = current();
    edit(after);
    return diffOpenApi(current(), after);
  };

  it('a new webhook is additive', () => {
    const d = diffOpenApi(openapi(), current());
    expect(messages(d.additive)).toContain('webhook article: webhook added');
    expect(d.breaking).toEqual([]);
  });

  it('a webhook removed breaks the receivers built on it', () => {
    const d = withHook((doc) => delete doc.webhooks.article);
    expect(messages(d.breaking)).toEqual(['webhook article: webhook removed']);
  });

  it('a body field no longer required, or an operationId renamed, is breaking', () => {
    const d = withHook((doc) => {
      doc.components.schemas.ArticleWebhook.required = ['type', 'data'];
      doc.webhooks.article.post.operationId = 'onArticle';
    });
    expect(messages(d.breaking)).toEqual(
      expect.arrayContaining([
        'webhook article › POST: operationId renamed from receiveArticle to onArticle (generated receivers use it)',
        expect.stringMatching(/^webhook article › POST › body › application\/json › timestamp/),
      ]),
    );
  });

  it('a new optional body field is additive', () => {
    const d = withHook((doc) => {
      doc.components.schemas.ArticleWebhook.properties.attempt = { type: 'integer' };
    });
    expect(d.breaking).toEqual([]);
    expect(messages(d.additive).some((m) => m.startsWith('webhook article › POST › body'))).toBe(true);
  });
});
