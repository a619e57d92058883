/** `fns status …`: the operator's side of the public status page (notes, and the report the instances serve now). */
import type { IncidentRecord, Store } from '../store/ports/index.js';
import { incidentJson, type StatusReport } from '../status/index.js';
import { printable, printableJson } from '../domain/printable.js';
import { CliError, EXIT, UsageError } from './errors.js';

/** What a note may concern: the whole service, a component, or a registered source. */
const COMPONENTS = ['service', 'rest', 'stream', 'webhooks', 'search'];
/** A stored report older than this was not refreshed by any instance (they refresh it every few seconds). */
const STALE_REPORT_SECONDS = 30;
/** The longest note the contract's StatusIncident.message holds. */
const NOTE_MAX_CHARS = 500;

export interface StatusCommandIo {
  out(text: string): void;
  now: () => number;
  openStore: () => Promise<Store>;
}

export type StatusSubcommand = 'note' | 'resolve' | 'show';

const incidentId = (i: IncidentRecord) => incidentJson(i).id;

function checkNote(message: string): string {
  const text = message.trim();
  if (text === '') throw new UsageError('<message> must not be empty');
  if ([...text].length > NOTE_MAX_CHARS) throw new UsageError(`<message> is longer than ${NOTE_MAX_CHARS} characters`);
  // One line of plain text: the page shows it as given, the JSON carries it, control characters never.
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new UsageError('<message> must be one line without control characters');
  return text;
}

async function checkComponent(store: Store, raw: string | undefined): Promise<string> {
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

async function note(
  store: Store,
  args: string[],
  opts: { json: boolean; component?: string | undefined },
  io: StatusCommandIo,
) {
  const message = checkNote(args[0]!);
  const component = await checkComponent(store, opts.component);
  const added = await store.status.note(component, message, io.now());
  io.out(
    opts.json
      ? printableJson(incidentJson(added))
      : `note ${incidentId(added)} added (${component}); fns status resolve ${incidentId(added)} ends it`,
  );
}

async function resolve(store: Store, args: string[], opts: { json: boolean }, io: StatusCommandIo) {
  const id = args[0] === undefined ? undefined : parseIncidentId(args[0]);
  const ended = await store.status.resolve(io.now(), id);
  if (id !== undefined && ended.length === 0) throw new CliError(`no open note inc_${id} (fns status show lists them)`);
  io.out(
    opts.json
      ? printableJson(ended.map(incidentJson))
      : ended.length
        ? `resolved ${ended.map(incidentId).join(', ')}`
        : 'no open note to resolve',
  );
}

async function show(store: Store, opts: { json: boolean }, io: StatusCommandIo) {
  const stored = await store.status.report();
  if (!stored) throw new CliError('no status report yet: a running service publishes one every few seconds');
  if (opts.json) return io.out(stored.body);
  const report = JSON.parse(stored.body) as StatusReport;
  const open = report.incidents.filter((i) => i.ended_at === null);
  const age = Math.max(0, Math.round((io.now() - stored.generatedAt) / 1000));
  const stale =
    age > STALE_REPORT_SECONDS ? `; no instance has refreshed it for ${age} s: is the service running?` : '';
  io.out(
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
}

export async function runStatusCommand(
  sub: StatusSubcommand,
  args: string[],
  opts: { json: boolean; component?: string | undefined },
  io: StatusCommandIo,
): Promise<number> {
  const store = await io.openStore();
  try {
    if (sub === 'note') await note(store, args, opts, io);
    else if (sub === 'resolve') await resolve(store, args, opts, io);
    else await show(store, opts, io);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
