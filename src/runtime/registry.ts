// The workflows an engine knows, by name, each with the version it was registered at.
// The version is a digest of the definition's source, recorded on every run it starts.
import { sha256Hex } from '../domain/sha256.ts';
import { UnknownWorkflowError, ValidationError } from '../domain/errors.ts';
import { isWorkflowDefinition, type WorkflowDefinition, type WorkflowSchemas } from '../../sdk/workflow.ts';
import type { Trigger } from '../../sdk/triggers.ts';
import type { Permissions } from '../domain/permissions.ts';
import type { StepOptions } from '../../sdk/types.ts';
import type { QueueDefinition } from '../../sdk/queue.ts';
import type { RunOptions } from '../../sdk/run-flow.ts';
import type { DebounceSpec } from '../../sdk/debounce.ts';
import { QueueNames } from './queue-names.ts';

/** A workflow file, as described by a Deno child with no permissions (never imported here). */
export interface FileWorkflow {
  /** The live file (absolute). */
  path: string;
  /** Content digest: the run's version, and the name of its snapshot. */
  digest: string;
  permissions: Permissions;
}

/** What describing a workflow file gave. */
export interface FileDescription {
  file: FileWorkflow;
  name: string;
  triggers: Trigger[];
  stepDefaults: StepOptions;
  /** The file's schemas as the engine checks them (each run by the file's check child). */
  schemas?: WorkflowSchemas;
  /** The file's run timeout (`workflow(name, { timeout })`), ms. */
  timeoutMs?: number;
  /** The queues the file declares (`workflow(name, { queues })`): its steps' only queues. */
  queues?: readonly QueueDefinition[];
  /** Its run-level flow control, data only (a queue, a singleton mode, a rate limit). */
  runs?: RunOptions;
  /** Its run-level debounce (the key read by fromInput()). */
  debounce?: DebounceSpec;
}

export interface RegisteredWorkflow {
  definition: WorkflowDefinition;
  version: string;
  /** Set for a workflow file: it runs in a Deno child, never in this process. */
  file?: FileWorkflow;
}

export function versionOf(def: WorkflowDefinition): string {
  if (def.version !== undefined) return def.version;
  const triggers = JSON.stringify(def.triggers.map((t) => ({ ...t, validate: undefined })));
  return sha256Hex(`${def.name}\n${triggers}\n${def.fn.toString()}`).slice(0, 12);
}

/** A workflow file not registered at start, with the one line saying why. */
export interface RefusedFile {
  name: string;
  path: string;
  reason: string;
}

export class WorkflowRegistry {
  private readonly byName = new Map<string, RegisteredWorkflow>();
  /** Files refused at start (their workflows are not registered), by workflow name. */
  private readonly refusedByName = new Map<string, RefusedFile>();

  constructor(definitions: readonly unknown[], files: readonly FileDescription[] = []) {
    definitions.forEach((def, i) => {
      if (!isWorkflowDefinition(def)) throw new ValidationError(`workflows[${i}]: not a workflow() definition`);
      if (this.byName.has(def.name)) throw new ValidationError(`workflows[${i}]: workflow '${def.name}' registered twice`);
      this.byName.set(def.name, { definition: def, version: versionOf(def) });
    });
    // A file (written by whoever may write it, docs/runner.md) that defines a queue of the
    // app's (or of an earlier file's) with other limits is refused alone: it must neither get
    // slots on its own terms nor keep the engine and the app's workflows from starting.
    // Conflicts among code workflows stay the executor's start error (queueSpecsOf).
    const queues = new QueueNames();
    for (const def of this.byName.values()) queues.add(def.definition);
    for (const f of files) {
      if (this.byName.has(f.name)) throw new ValidationError(`workflowFiles: workflow '${f.name}' (${f.file.path}) registered twice`);
      const entry = fileEntry(f);
      const reason = queueConflictLine(queues, entry, 'is not registered');
      if (reason) {
        this.refusedByName.set(f.name, { name: f.name, path: f.file.path, reason });
        continue;
      }
      queues.add(entry.definition);
      this.byName.set(f.name, entry);
    }
  }

  /** The workflow files refused at start (registry constructor), each with its reason. */
  get refused(): RefusedFile[] {
    return [...this.refusedByName.values()];
  }

  /** A workflow file described again after it changed on disk: the same name, its new
   *  version and declaration. Runs already created keep their recorded version. */
  replaceFile(f: FileDescription): RegisteredWorkflow {
    const prev = this.byName.get(f.name);
    if (!prev?.file) throw new ValidationError(`workflow file ${f.file.path}: it now declares workflow '${f.name}', not a registered file workflow; restart the engine to register it`);
    const next = fileEntry(f);
    // Changed on disk to define a shared queue with other limits: it keeps its registration.
    const others = new QueueNames();
    for (const w of this.byName.values()) if (w.definition.name !== f.name) others.add(w.definition);
    const reason = queueConflictLine(others, next, 'keeps its registered version');
    if (reason) throw new ValidationError(reason);
    this.byName.set(f.name, next);
    return next;
  }

  get(name: string): RegisteredWorkflow {
    const w = this.byName.get(name);
    const refused = this.refusedByName.get(name);
    if (!w && refused) throw new ValidationError(refused.reason);
    if (!w) throw new UnknownWorkflowError(name);
    return w;
  }

  find(name: string): RegisteredWorkflow | undefined {
    return this.byName.get(name);
  }

  all(): RegisteredWorkflow[] {
    return [...this.byName.values()];
  }

  /** Workflows with an event(name) trigger for this event. */
  subscribers(eventName: string): string[] {
    return this.all()
      .filter((w) => w.definition.triggers.some((t: Trigger) => t.type === 'event' && t.name === eventName))
      .map((w) => w.definition.name);
  }
}

/** The one line refusing a file whose queue conflicts with a known one; undefined if none. */
function queueConflictLine(known: QueueNames, entry: RegisteredWorkflow, outcome: string): string | undefined {
  const c = known.conflict(entry.definition);
  if (!c) return undefined;
  return `workflow file ${entry.file!.path}: workflow '${entry.definition.name}' ${outcome}: it defines queue '${c.queue}' with limits ${JSON.stringify(c.other)}, but workflow '${c.by}' defines it with ${JSON.stringify(c.known)} (a file shares a queue by declaring the same limits)`;
}

function fileEntry(f: FileDescription): RegisteredWorkflow {
  const fn = () => {
    throw new Error(`workflow file '${f.name}' runs only in its Deno child`);
  };
  const definition: WorkflowDefinition = Object.freeze({
    kind: 'tranquil.workflow' as const, name: f.name, triggers: Object.freeze([...f.triggers]), fn, stepDefaults: f.stepDefaults, permissions: f.file.permissions,
    ...(f.schemas ? { schemas: f.schemas } : {}), ...(f.timeoutMs !== undefined ? { timeoutMs: f.timeoutMs } : {}),
    ...(f.queues ? { queues: f.queues } : {}), ...(f.runs ? { runs: f.runs } : {}), ...(f.debounce ? { debounce: f.debounce } : {}),
  });
  return { definition, version: f.file.digest, file: f.file };
}
