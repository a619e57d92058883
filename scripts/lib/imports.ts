/**
 * The import graph of `src/` (relative imports only), for the shape check in test/shape: file and folder
 * cycles, and imports that go up the layers of docs/architecture.md.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The layers of docs/architecture.md, bottom (0) to top; a top-level folder of src/ belongs to one. */
export const LAYERS: Record<string, number> = {
  domain: 0,
  runtime: 0,
  contract: 0,
  config: 0,
  enrich: 1,
  dedup: 1,
  store: 2,
  state: 2,
  net: 2,
  auth: 3,
  ingest: 3,
  search: 3,
  indexing: 3,
  delivery: 3,
  http: 4,
  stream: 4,
  ops: 4,
  mock: 4,
  sources: 4,
  webhooks: 4,
  status: 4,
  server: 5,
  cli: 5,
};

export type Graph = Map<string, Set<string>>;

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Relative import specifiers of a module's text (static, re-exports and literal dynamic imports). */
export function importsOf(text: string): string[] {
  const withoutComments = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"])\/\/.*$/gm, '$1');
  return [...withoutComments.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!);
}

/** The file graph of every .ts/.mts module under `root` (paths relative to `root`). */
export function fileGraph(root: string): Graph {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.m?ts$/.test(name) && !name.endsWith('.d.ts')) files.push(path);
    }
  };
  walk(root);
  const graph: Graph = new Map();
  for (const file of files) {
    const targets = new Set<string>();
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), spec)
        .replace(/\.js$/, '.ts')
        .replace(/\.mjs$/, '.mts');
      targets.add(relative(root, target));
    }
    graph.set(relative(root, file), targets);
  }
  return graph;
}

/** The folder graph: folder A → folder B when a file of A imports a file of B (A ≠ B). */
export function folderGraph(files: Graph): Graph {
  const graph: Graph = new Map();
  for (const [file, targets] of files) {
    const from = dirname(file);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const target of targets) if (dirname(target) !== from) graph.get(from)!.add(dirname(target));
  }
  return graph;
}

/** Strongly connected components with more than one node (or a node importing itself): the cycles. */
export function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** Imports from a lower layer to a higher one (`file → target`), and files in a folder no layer names. */
export function upwardImports(files: Graph, layers: Record<string, number> = LAYERS): string[] {
  const problems: string[] = [];
  const top = (path: string) => path.split('/')[0]!;
  for (const [file, targets] of files) {
    const from = layers[top(file)];
    if (!file.includes('/')) continue; // a module at the root of src/ (none today) sits above every layer
    if (from === undefined) {
      problems.push(`${file}: folder ${top(file)}/ has no layer in docs/architecture.md`);
      continue;
    }
    for (const target of targets) {
      const to = layers[top(target)];
      if (to !== undefined && to > from) problems.push(`${file} → ${target} (layer ${from} imports layer ${to})`);
    }
  }
  return problems;
}
