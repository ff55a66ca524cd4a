// @tranquil/sdk: the authoring surface (README.md, Quick start). Backend-neutral.
/**
 * Writing workflows: workflow(name, build), the triggers (manual, event, schedule, webhook),
 * the step API and the errors workflow code throws or catches. Backend-neutral: the same
 * definitions run on SQLite and Restate. Also importable as `@tranquil/engine/sdk`.
 * @module @tranquil/sdk
 */
export { workflow, isWorkflowDefinition, type WorkflowDefinition, type WorkflowBuilder, type WorkflowOptions, type WorkflowSchemas } from './workflow.ts';
export type { StandardSchemaV1 } from './standard-schema.ts';
export type { Permissions } from '../src/domain/permission-declaration.ts';
export { manual, event, schedule, webhook, type Trigger, type CatchUpPolicy, type WebhookValidator } from './triggers.ts';
export { queue, isQueueDefinition, type QueueDefinition, type QueueOptions, type QueueRef, type RateLimitOptions, type LimitOptions, type RunQueueOptions } from './queue.ts';
export type { DebounceOptions, DebounceSpec } from './debounce.ts';
export type { RunOptions, SingletonOptions, RunRateLimitOptions } from './run-flow.ts';
export { fromInput, type InputPathFn } from './from-input.ts';
export { TerminalError, TimeoutError, CancelledError, NonDeterminismError, ChildRunError } from '../src/domain/errors.ts';
export type * from './types.ts';
