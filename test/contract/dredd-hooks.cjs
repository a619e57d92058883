/**
 * Dredd hooks for `npm run contract`: every documented status of every operation is exercised (Dredd
 * skips non-2xx by default), and every body is checked against the real schema of openapi.yaml with
 * Ajv, since Dredd's OpenAPI 3 support only compares bodies with examples.
 * Keys come from the runner in FNS_CONTRACT_KEYS; each transaction gets its own client address
 * (X-Forwarded-For; the service trusts one proxy hop, TRUST_PROXY=1) so the IP guard sees one key per client.
 */
const hooks = require('hooks');
const { readFileSync } = require('node:fs');
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;

const keys = JSON.parse(process.env.FNS_CONTRACT_KEYS);
const openapi = JSON.parse(readFileSync(process.env.FNS_OPENAPI_JSON, 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) });
ajv.addFormat('int64', { type: 'number', validate: (n) => Number.isInteger(n) });
ajv.addSchema(openapi, 'openapi');

const OPS = {
  '/v1/news': 'listNews',
  '/v1/news/search': 'searchNews',
  '/v1/account/usage': 'getAccountUsage',
  '/v1/status': 'getServiceStatus',
};

/** How to provoke each documented status: key, query and an expected `detail`. */
const PLAN = {
  'listNews 200': { key: keys.max, path: '/v1/news?limit=5' },
  'listNews 400': { key: keys.max, path: '/v1/news?limit=0', detail: 'limit must be an integer between 1 and 100' },
  'listNews 401': { key: 'fns_live_not_a_key', path: '/v1/news', detail: 'Invalid API key' },
  'listNews 403': { key: keys.inactive, path: '/v1/news', detail: 'API key is inactive' },
  'listNews 429': { key: keys.starterExhausted, path: '/v1/news', detail: 'Rate limit exceeded. Try again shortly.' },
  'searchNews 200': { key: keys.max, path: '/v1/news/search?q=central%20bank%20raises%20rates&limit=3' },
  'searchNews 400': {
    key: keys.max,
    path: '/v1/news/search?q=a',
    detail: 'q must be a string of 2 to 500 characters, not only spaces',
  },
  'searchNews 401': { key: undefined, path: '/v1/news/search?q=fed', detail: 'Invalid API key' },
  'searchNews 403': {
    key: keys.pro,
    path: '/v1/news/search?q=fed',
    detail: 'Semantic search is available on the Max plan only.',
  },
  'searchNews 429': {
    key: keys.maxExhausted,
    path: '/v1/news/search?q=fed',
    detail: 'Rate limit exceeded. Try again shortly.',
  },
  'searchNews 503': {
    key: keys.max,
    path: `/v1/news/search?q=${encodeURIComponent(keys.outageQuery)}`,
    detail: 'Embedding service temporarily unavailable; please retry shortly.',
  },
  'getAccountUsage 200': { key: keys.pro, path: '/v1/account/usage' },
  'getAccountUsage 400': {
    key: keys.pro,
    path: '/v1/account/usage?verbose=true',
    detail: 'verbose is not a parameter of this operation',
  },
  'getAccountUsage 401': { key: 'fns_test_max', path: '/v1/account/usage', detail: 'Invalid API key' },
  'getAccountUsage 403': { key: keys.inactive, path: '/v1/account/usage', detail: 'API key is inactive' },
  'listNews 503': {
    key: keys.outage,
    path: '/v1/news',
    detail: 'The service is temporarily unavailable; please retry shortly.',
  },
  // Public: no key at all.
  'getServiceStatus 200': { key: undefined, path: '/v1/status' },
  'getServiceStatus 400': {
    key: undefined,
    path: '/v1/status?verbose=true',
    detail: 'verbose is not a parameter of this operation',
  },
  'getAccountUsage 503': {
    key: keys.outage,
    path: '/v1/account/usage',
    detail: 'The service is temporarily unavailable; please retry shortly.',
  },
};

const covered = [];
let client = 0;

function planFor(t) {
  const path = t.request.uri.split('?')[0];
  return { id: `${OPS[path]} ${t.expected.statusCode}`, op: OPS[path], status: t.expected.statusCode };
}

const deref = (n) =>
  n && n.$ref
    ? deref(
        n.$ref
          .slice(2)
          .split('/')
          .reduce((x, k) => x[k], openapi),
      )
    : n;

function responseFor(op, status) {
  for (const item of Object.values(openapi.paths)) {
    for (const o of Object.values(item)) if (o.operationId === op) return deref(o.responses[status]);
  }
}

function schemaFor(op, status, mediaType) {
  const media = responseFor(op, status).content[mediaType];
  return media && media.schema;
}

/** OpenAPI headers are optional unless `required: true`; Dredd expects every documented one. */
function optionalHeaders(op, status) {
  const headers = responseFor(op, status).headers || {};
  return Object.entries(headers)
    .filter(([, h]) => !deref(h).required)
    .map(([name]) => name.toLowerCase());
}

hooks.beforeEach((t) => {
  const { id } = planFor(t);
  const plan = PLAN[id];
  if (!plan) {
    t.fail = `no plan for ${id}: add one to dredd-hooks.cjs`;
    return;
  }
  t.skip = false;
  t.fullPath = plan.path;
  t.request.uri = plan.path;
  if (plan.key === undefined) delete t.request.headers['X-API-Key'];
  else t.request.headers['X-API-Key'] = plan.key;
  client += 1;
  t.request.headers['X-Forwarded-For'] = `198.51.100.${client}`;
  const { op, status } = planFor(t);
  const optional = optionalHeaders(op, status);
  for (const name of Object.keys(t.expected.headers || {})) {
    if (optional.includes(name.toLowerCase())) delete t.expected.headers[name];
  }
});

hooks.beforeEachValidation((t) => {
  const { id, op, status } = planFor(t);
  const plan = PLAN[id];
  const mediaType = (t.real.headers['content-type'] || '').split(';')[0];
  const schema = schemaFor(op, status, mediaType);
  if (!schema) {
    t.fail = `${id}: no schema for content type ${mediaType}`;
    return;
  }
  let body;
  try {
    body = JSON.parse(t.real.body);
  } catch (e) {
    t.fail = `${id}: body is not JSON`;
    return;
  }
  const validate = schema.$ref ? ajv.getSchema(`openapi${schema.$ref}`) : ajv.compile(schema);
  if (!validate(body)) {
    t.fail = `${id}: body does not match the schema: ${ajv.errorsText(validate.errors)}`;
    return;
  }
  if (plan.detail !== undefined && body.detail !== plan.detail) {
    t.fail = `${id}: detail ${JSON.stringify(body.detail)}, expected ${JSON.stringify(plan.detail)}`;
    return;
  }
  // Example values differ from live data by nature; Dredd would compare the body with the example. The
  // schema check above is the real one, so Dredd's own body comparison is given the live body.
  t.expected.body = t.real.body;
  delete t.expected.bodySchema;
});

hooks.afterEach((t) => {
  if (t.test && t.test.status === 'pass') covered.push(planFor(t).id);
});

hooks.afterAll((transactions, done) => {
  const documented = Object.keys(PLAN);
  const missing = documented.filter((id) => !covered.includes(id));
  console.log(
    `contract: ${covered.length} of ${documented.length} documented statuses exercised and passing${missing.length ? `; missing: ${missing.join(', ')}` : ''}`,
  );
  done();
});
