// A workflow file's Standard Schemas, as the engine's boundaries see them (docs/values.md,
// Schemas): each is a schema whose validate asks the file's check child (runner/schema-check.ts:
// the describe entry started with `check`, no permission at all) to run the file's own schema
// on the value. So a file's input, event payload and signal schemas refuse the same values
// with the same one-line errors as a workflow registered in-process, and the run gets the
// schema's parsed value. One check child per version, started at the first check and killed
// after `idleMs` without one; a check that takes longer than `timeoutMs` kills it.
import { ValidationError } from '../../domain/errors.ts';
import type { Json } from '../../domain/json.ts';
import { decodeValue, encodeValue } from '../../domain/value-codec.ts';
import { schemaUnanswered, type StandardIssue, type StandardResult, type StandardSchemaV1 } from '../../../sdk/standard-schema.ts';
import type { DenoChild } from './child-process.ts';
import { lastLine } from './child-endings.ts';

/** What runner/schema-check.ts prefixes its answers with. */
const CHECK_PREFIX = 'tranquil-check ';

export type CheckAt = 'input' | 'signal' | 'event' | 'webhook';

/** Starts the check child of a version; `onLine` gets each line it prints. */
export type SpawnCheckChild = (version: string, onLine: (line: string) => void) => DenoChild;

interface Pending {
  resolve: (r: StandardResult<unknown>) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

interface CheckChild {
  child: DenoChild;
  pending: Map<number, Pending>;
  idle?: NodeJS.Timeout;
}

type Answer = { id: number; value?: Json; issues?: StandardIssue[]; error?: string };

export class FileSchemaChecks {
  private readonly children = new Map<string, CheckChild>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly spawn: SpawnCheckChild, private readonly o: { timeoutMs: number; idleMs: number }) {}

  /** The schema `at` (`name`: the signal's or the event's) of `file` at `version`. */
  schema(version: string, file: string, at: CheckAt, name?: string): StandardSchemaV1 {
    return { '~standard': { version: 1, vendor: 'tranquil-workflow-file', validate: (value: unknown) => this.check(version, file, at, name, value) } };
  }

  close(): void {
    this.closed = true;
    for (const c of this.children.values()) c.child.kill();
  }

  private async check(version: string, file: string, at: CheckAt, name: string | undefined, value: unknown): Promise<StandardResult<unknown>> {
    if (this.closed) throw schemaUnanswered(new ValidationError(`workflow file ${file}: the engine is stopping; its ${at} schema cannot be checked`));
    // What the schema sees crosses in the codec's stored form (a Date stays a Date).
    const stored = encodeValue(value, `the value for the ${at} schema of workflow file ${file}`).stored;
    const c = this.childOf(version, file);
    clearTimeout(c.idle);
    const id = this.nextId++;
    const answer = new Promise<StandardResult<unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        c.child.kill();
        reject(schemaUnanswered(new ValidationError(`workflow file ${file}: checking its ${at} schema took longer than ${this.o.timeoutMs}ms; the check child was killed (config deno.describeTimeout)`)));
      }, this.o.timeoutMs);
      c.pending.set(id, { resolve, reject, timer });
    });
    c.child.stdin!.write(`${JSON.stringify({ id, at, ...(name !== undefined ? { name } : {}), value: stored })}\n`);
    try {
      return await answer;
    } finally {
      c.pending.delete(id);
      if (c.pending.size === 0 && this.children.get(version) === c) {
        c.idle = setTimeout(() => c.child.kill(), this.o.idleMs);
        c.idle.unref();
      }
    }
  }

  private childOf(version: string, file: string): CheckChild {
    const known = this.children.get(version);
    if (known) return known;
    const pending = new Map<number, Pending>();
    const onLine = (line: string) => {
      if (!line.startsWith(CHECK_PREFIX)) return; // the file's own console output
      let a: Answer;
      try {
        a = JSON.parse(line.slice(CHECK_PREFIX.length)) as Answer;
      } catch {
        return;
      }
      const p = pending.get(a.id);
      if (!p) return;
      clearTimeout(p.timer);
      if (a.error !== undefined) p.reject(new ValidationError(`workflow file ${file}: its schema threw: ${a.error}`.replace(/\s*\n\s*/g, ' ')));
      else if (a.issues) p.resolve({ issues: a.issues });
      else p.resolve({ value: decodeValue(a.value) });
    };
    const child = this.spawn(version, onLine);
    const c: CheckChild = { child, pending };
    this.children.set(version, c);
    void child.exited.then((exit) => {
      if (this.children.get(version) === c) this.children.delete(version);
      clearTimeout(c.idle);
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        p.reject(schemaUnanswered(new ValidationError(`workflow file ${file}: its check child ended (${exit.code ?? exit.signal}) before answering: ${lastLine(child.stderr)}`)));
      }
    });
    return c;
  }
}
