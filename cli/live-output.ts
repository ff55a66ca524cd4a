// `tranquil runs state | stream` (docs/live-output.md): a run's published state and its
// streams, read from the data dir's backend (the SQLite file read-only, or Restate's admin
// API), a serve running or not. A wait (--wait) or a follow (--follow) is engine.runs' own
// reader (src/runtime/live-output.ts) over the CLI's RunReader. The CLI executes nothing, so
// it waits on the backend instead: on SQLite for a write to the data dir's file (inotify), on
// Restate for the run's step events in Restate's log (long-polled), and reads the run again
// then; a slow poll (2 s) is only the safety net.
import { Option, type Command } from 'commander';
import * as z from 'zod';
import { common, print, withRuns, type Common } from './program.ts';
import { loadProject, type Project } from './project.ts';
import { runIdArg } from './control.ts';
import { checkStateKey, publishedState, streamNames, streamOf } from '../src/domain/published-state.ts';
import { UnknownRunError, ValidationError } from '../src/domain/errors.ts';
import { readDuration } from '../src/domain/duration.ts';
import { isTerminal } from '../src/domain/run-status.ts';
import { once } from '../src/domain/once.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { chunkText, valueText } from '../src/domain/value-text.ts';
import { encodeValue } from '../src/domain/value-codec.ts';
import type { Json } from '../src/domain/json.ts';
import type { RunView } from '../src/domain/run-view.ts';
import type { RunReader } from '../src/ports/run-reader.ts';
import { liveOutputApi, type LiveOutputApi, type LiveWaits } from '../src/runtime/live-output.ts';
import { fileChanges } from '../src/adapters/sqlite/file-changes.ts';
import { openEventLog } from '../compose/run-reader.ts';
import { resolveConfig } from '../compose/config.ts';
import { StepEvents } from '../src/runtime/step-events.ts';

/** A flag's duration ('30s', '1h30m', or ms), or one line saying what is wrong with it. */
const durationFlag = once(() => z.string().transform((v, ctx) => {
  const ms = readDuration(/^\d+$/.test(v) ? Number(v) : v);
  if (typeof ms === 'string') {
    ctx.addIssue({ code: 'custom', message: ms });
    return z.NEVER;
  }
  return Math.max(0, ms);
}));

/** An offset flag: a whole number from 0. */
const offsetFlag = once(() => z.string().regex(/^\d{1,15}$/, 'expected an offset: a whole number from 0').transform(Number));

const getRun = async (reader: RunReader, id: string): Promise<RunView> => (await reader.getRun(id)) ?? Promise.reject(new UnknownRunError(id));

/** With a wake source, a wait reads the run again at least this often all the same. */
const SAFETY_POLL_MS = 2000;

/** engine.runs' live-output reader over the CLI's RunReader, woken by the backend. */
async function liveOver(reader: RunReader, project: Project): Promise<LiveOutputApi> {
  const config = resolveConfig({ ...project.engine, dataDir: project.dataDir });
  const hub = new StepEvents();
  let waits: LiveWaits = {};
  if (config.backend === 'sqlite') {
    waits = { changes: fileChanges(config.dataDir), pollMs: SAFETY_POLL_MS };
  } else {
    const log = await openEventLog(config);
    if (log) (hub.useRemote(log), (waits = { pollMs: SAFETY_POLL_MS }));
  }
  return liveOutputApi((id) => getRun(reader, id), hub, (id) => runIdArg(id as string), waits);
}

/** Writes chunks as a person reads a stream (a string as written, any other value on a line
 *  of its own), or with --json one line `{ offset, chunk }` each (the stored form). */
class ChunkPrinter {
  private endsLine = true;

  constructor(private readonly json: boolean) {}

  write(offset: number, stored: Json): void {
    const text = this.json ? `${JSON.stringify({ offset, chunk: stored })}\n` : chunkText(stored);
    if (text.length === 0) return;
    process.stdout.write(text);
    this.endsLine = text.endsWith('\n');
  }

  /** A prompt after a token stream starts on a line of its own. */
  end(): void {
    if (!this.endsLine) process.stdout.write('\n');
  }
}

export function liveOutputCommands(runs: Command): void {
  common(runs.command('state <runId> [key]').description("a run's published state (ctx.publish): every key's latest value, or one key's (--wait: for its first value)"))
    .option('--wait <duration>', "with a key not published yet: wait up to this long for it (e.g. 30s, 5m); TimeoutError after")
    .action(async (id: string, key: string | undefined, o: Common & { wait?: string }) => {
      const rid = runIdArg(id);
      const k = key === undefined ? undefined : checkStateKey(key, 'key');
      const waitMs = o.wait === undefined ? undefined : parseOrThrow(durationFlag(), o.wait, '--wait');
      if (waitMs !== undefined && k === undefined) throw new ValidationError(`--wait: waits for one key: \`tranquil runs state ${rid} <key> --wait ${o.wait}\``);
      const project = await loadProject(o);
      const run = await withRuns(project, async (reader) => {
        // The wait is engine.runs.state's: a run that ends without the key ends it at once.
        if (waitMs !== undefined) await (await liveOver(reader, project)).state(rid, k!, { timeout: waitMs });
        return getRun(reader, rid);
      });
      const all = publishedState(run.steps);
      if (k === undefined) {
        // --json keeps the stored form (lossless), as runs describe does.
        return print(o, all, () => (all.length ? all.map((p) => `${p.key}  ${valueText(p.value)}  (published ${p.publishedAt ?? '?'} by step '${p.step}')`).join('\n') : `run ${rid} published no state`));
      }
      const p = all.find((x) => x.key === k);
      if (!p) {
        process.exitCode = 1;
        return print(o, null, () => `run ${rid} published no state under '${k}'${isTerminal(run.status) ? ` (it ${run.status})` : ''}`);
      }
      print(o, p, () => valueText(p.value));
    });

  common(runs.command('stream <runId> <name>').description("a run's stream (ctx.stream): its chunks in order from --from; --follow: then live until the stream is closed or the run ends"))
    .addOption(new Option('--from <offset>', 'the offset of the first chunk to print (from 0)').default('0'))
    .option('--follow', 'keep printing chunks as the run writes them, until the stream is closed or the run ends')
    .action(async (id: string, name: string, o: Common & { from: string; follow?: boolean }) => {
      const rid = runIdArg(id);
      const n = checkStateKey(name, 'stream name');
      const from = parseOrThrow(offsetFlag(), o.from, '--from');
      const out = new ChunkPrinter(!!o.json);
      const project = await loadProject(o);
      await withRuns(project, async (reader) => {
        const run = await getRun(reader, rid);
        const { chunks, closed } = streamOf(run.steps, n);
        // What can never come: a stream the ended run did not write, an offset past a closed
        // stream's end. Without --follow, what is not there yet is refused the same way.
        const done = closed || isTerminal(run.status);
        const names = streamNames(run.steps);
        if (!names.includes(n) && (done || !o.follow)) {
          const known = names.length ? `its streams: ${names.map((s) => `'${s}'`).join(', ')}` : 'it wrote to no stream';
          throw new ValidationError(`run ${rid} wrote no stream '${n}'${done ? '' : ' yet (--follow waits for it)'} (${known})`);
        }
        if (from > chunks.length && (done || !o.follow)) {
          throw new ValidationError(`--from: ${from} is past the end of stream '${n}' of run ${rid} (${chunks.length} chunk${chunks.length === 1 ? '' : 's'}${closed ? ', closed' : done ? `, run ${run.status}` : ' so far; --follow waits for more'})`);
        }
        if (!o.follow) {
          chunks.slice(from).forEach((c, i) => out.write(from + i, c));
          return;
        }
        // The reader decodes; printed in the stored form again (as --json and valueText take it).
        let offset = from;
        for await (const c of (await liveOver(reader, project)).stream(rid, n, { from })) out.write(offset++, encodeValue(c, `chunk ${offset - 1} of stream '${n}'`).stored);
      });
      out.end();
    });
}
