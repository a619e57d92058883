/**
 * Whether generated/ matches the specs' SHA-256 recorded by `npm run generate`: a start refuses when not, since a spec
 * edit left ungenerated would silently change nothing. Without the YAML (an installed package), generated/ rules.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const REGENERATE = 'run `npm run generate`';

/** Why generated/ is stale, or undefined; hashes bytes as checked out (.gitattributes keeps *.yaml LF everywhere). */
export function staleGenerated(root: string = repoRoot): string | undefined {
  const recordPath = join(root, 'generated', 'sources.json');
  if (!existsSync(recordPath)) {
    const specs = ['openapi.yaml', 'asyncapi.yaml'].filter((f) => existsSync(join(root, f)));
    return specs.length === 0
      ? undefined
      : `generated/sources.json is missing, so generated/ may not match ${specs.join(' and ')}: ${REGENERATE}`;
  }
  let recorded: Record<string, string>;
  try {
    recorded = JSON.parse(readFileSync(recordPath, 'utf8')).sha256;
    if (typeof recorded !== 'object' || recorded === null) throw new Error('no sha256 object');
  } catch (err) {
    return `generated/sources.json is unreadable (${(err as Error).message}): ${REGENERATE}`;
  }
  const changed = Object.entries(recorded)
    .filter(([file]) => existsSync(join(root, file)))
    .filter(
      ([file, sha]) =>
        createHash('sha256')
          .update(readFileSync(join(root, file)))
          .digest('hex') !== sha,
    )
    .map(([file]) => file);
  if (changed.length === 0) return undefined;
  return `${changed.join(' and ')} ${changed.length === 1 ? 'has' : 'have'} changed since generated/ was built: ${REGENERATE}`;
}
