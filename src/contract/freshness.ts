/**
 * Is generated/ still what the hand-written specs give? The service, the CLI and the mock read the
 * contract from generated/ (bundled JSON, types), so an edit of openapi.yaml or asyncapi.yaml without
 * `npm run generate` would silently change nothing at run time. `npm run generate` records the SHA-256
 * of each spec in generated/sources.json; a start compares it with the specs on disk and refuses when
 * they differ. Where the YAML sources are absent (an installed package ships generated/ only), there
 * is nothing to compare and generated/ is the contract.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const REGENERATE = 'run `npm run generate`';

/**
 * Why generated/ under `root` is stale, or undefined when it is fresh (or when the specs it was built
 * from are not there to compare). The hash is of the files' bytes as checked out (.gitattributes keeps
 * *.yaml LF on every platform, so a checkout anywhere hashes as it was generated).
 */
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
