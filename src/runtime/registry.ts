// The workflows an engine knows, by name, each with the version it was registered at.
// The version is a digest of the definition's source, recorded on every run it starts.
import { createHash } from 'node:crypto';
import { UnknownWorkflowError, ValidationError } from '../domain/errors.ts';
import { isWorkflowDefinition, type WorkflowDefinition } from '../../sdk/workflow.ts';
import type { Trigger } from '../../sdk/triggers.ts';

export interface RegisteredWorkflow {
  definition: WorkflowDefinition;
  version: string;
}

export function versionOf(def: WorkflowDefinition): string {
  const triggers = JSON.stringify(def.triggers.map((t) => ({ ...t, validate: undefined })));
  return createHash('sha256').update(`${def.name}\n${triggers}\n${def.fn.toString()}`).digest('hex').slice(0, 12);
}

export class WorkflowRegistry {
  private readonly byName = new Map<string, RegisteredWorkflow>();

  constructor(definitions: readonly unknown[]) {
    definitions.forEach((def, i) => {
      if (!isWorkflowDefinition(def)) throw new ValidationError(`workflows[${i}]: not a workflow() definition`);
      if (this.byName.has(def.name)) throw new ValidationError(`workflows[${i}]: workflow '${def.name}' registered twice`);
      this.byName.set(def.name, { definition: def, version: versionOf(def) });
    });
  }

  get(name: string): RegisteredWorkflow {
    const w = this.byName.get(name);
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
