// @tranquil/sdk: the authoring surface (README.md, Quick start). Backend-neutral.
export { workflow, isWorkflowDefinition, type WorkflowDefinition, type WorkflowBuilder } from './workflow.ts';
export { manual, event, schedule, webhook, type Trigger, type CatchUpPolicy, type WebhookValidator } from './triggers.ts';
export { queue, isQueueDefinition, type QueueDefinition, type QueueOptions, type QueueRef, type RateLimitOptions, type LimitOptions } from './queue.ts';
export { TerminalError, TimeoutError, CancelledError, NonDeterminismError } from '../src/domain/errors.ts';
export type * from './types.ts';
