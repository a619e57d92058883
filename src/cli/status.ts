/** `fns status …`: the operator's side of the public status page (notes, and the report the instances serve now). */
import type { IncidentRecord, StorePorts } from '../store/ports/index.js';
import { incidentJson, type StatusReport } from '../status/index.js';
import { printable } from '../domain/printable.js';
import { CliError, EXIT, UsageError } from './errors.js';
import { out, withStore, type CommandRun } from './io.js';

/** What a note may concern: the whole service, a component, or a registered source. */
const COMPONENTS = ['service', 'rest', 'stream', 'webhooks', 'search'];
/** A stored report older than this was not refreshed by any instance (they refresh it every few seconds). */
const STALE_REPORT_SECONDS = 30;
/** The longest note the contract's StatusIncident.message holds. */
const NOTE_MAX_CHARS = 500;

const incidentId = (i: IncidentRecord) => incidentJson(i).id;

function checkNote(message: string): string {
  const text = message.trim();
  if (text === '') throw new UsageError('<message> must not be empty');
  if ([...text].length > NOTE_MAX_CHARS) throw new UsageError(`<message> is longer than ${NOTE_MAX_CHARS} characters`);
  // One line of plain text: the page shows it as given, the JSON carries it, control characters (C0, DEL, C1: NEL,
  // CSI) and the line and paragraph separators never.
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text))
    throw new UsageError('<message> must be one line without control characters');
  return text;
}

async function checkComponent(store: StorePorts, raw: string | undefined): Promise<string> {
  const component = raw ?? 'service';
  if (COMPONENTS.includes(component)) return component;
  if (component.startsWith('source:') && (await store.sources.get(component.slice('source:'.length)))) return component;
  throw new UsageError(
    `--component must be one of ${COMPONENTS.join(', ')} or source:<name> of a registered source, got "${printable(component)}"`,
  );
}

function parseIncidentId(raw: string): number {
  const m = /^inc_([1-9][0-9]{0,15})$/.exec(raw);
  if (!m)
    throw new UsageError(
      `<id> must be an incident id such as inc_12 (fns status show lists the open notes), got "${printable(raw)}"`,
    );
  return Number(m[1]);
}

export async function addNote({ args, option, config, print }: CommandRun): Promise<number> {
  // Checked before the store is opened: a bad note is a usage error, whatever the state of DATA_DIR.
  const message = checkNote(args[0]!);
  const added = await withStore(config, async (store) => {
    const component = await checkComponent(store, option('component'));
    return store.status.note(component, message, Date.now());
  });
  print(
    incidentJson(added),
    `note ${incidentId(added)} added (${added.component}); fns status resolve ${incidentId(added)} ends it`,
  );
  return EXIT.ok;
}

export async function resolveNotes({ args, config, print }: CommandRun): Promise<number> {
  const id = args[0] === undefined ? undefined : parseIncidentId(args[0]);
  const ended = await withStore(config, async (store) => {
    const resolved = await store.status.resolve(Date.now(), id);
    if (id !== undefined && resolved.length === 0)
      throw new CliError(`no open note inc_${id} (fns status show lists them)`);
    return resolved;
  });
  print(
    ended.map(incidentJson),
    ended.length ? `resolved ${ended.map(incidentId).join(', ')}` : 'no open note to resolve',
  );
  return EXIT.ok;
}

export async function showStatus({ json, config }: CommandRun): Promise<number> {
  const stored = await withStore(config, (store) => store.status.report());
  if (!stored) throw new CliError('no status report yet: a running service publishes one every few seconds');
  // The report as the instances serve it, byte for byte.
  if (json) {
    out(stored.body);
    return EXIT.ok;
  }
  const report = JSON.parse(stored.body) as StatusReport;
  const open = report.incidents.filter((i) => i.ended_at === null);
  const age = Math.max(0, Math.round((Date.now() - stored.generatedAt) / 1000));
  const stale =
    age > STALE_REPORT_SECONDS ? `; no instance has refreshed it for ${age} s: is the service running?` : '';
  out(
    [
      `${report.state} (generated ${report.generated_at}, ${age} s ago${stale})`,
      ...report.components.map((c) => `  ${c.name}: ${c.state}${c.cause ? ` (${c.cause})` : ''}`),
      ...report.sources.map((s) => `  source ${s.name}: ${s.state}${s.cause ? ` (${s.cause})` : ''}`),
      `open incidents: ${open.length}`,
      ...open.map(
        (i) =>
          `  ${i.id} ${i.component} ${i.kind} since ${i.started_at}${i.message ? `: ${printable(i.message)}` : ''}`,
      ),
    ].join('\n'),
  );
  return EXIT.ok;
}
