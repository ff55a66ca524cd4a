// @tranquil/engine: createEngine(config). Usage: README.md; layers: docs/architecture.md.
/**
 * The engine: createEngine(config) and everything its API takes and returns (run views,
 * errors, plain workflows, the Runs panel, attach()). Workflows are written with
 * `@tranquil/sdk`; tests use `@tranquil/engine/testing`.
 * @module @tranquil/engine
 */
import { buildContainer, loadBackend, loadRunner, TOKENS } from './container.ts';
import { resolveConfig, type EngineConfig } from './config.ts';
import type { Engine } from '../src/runtime/engine.ts';

export type { EngineConfig } from './config.ts';
export type { Engine, RunsApi, RunList, EventsApi, SchedulesApi, WorkflowsApi, QueuesApi, DeclarationView } from '../src/runtime/engine.ts';
// The types the API's arguments and answers use, so an app can name them.
export type { EmitResult } from '../src/ports/executor.ts';
export type { CancelOptions } from '../src/domain/cancel.ts';
export type { GcOptions, GcReport, GcRun } from '../src/domain/retention.ts';
export type { ErrorInfo } from '../src/domain/errors.ts';
export type { ParentLink, ChildSummary, ParentCancelPolicy } from '../src/domain/child-runs.ts';
export type { LogSink, LogLevel, MessageLevel } from '../src/ports/logger.ts';
export type { LogRecord, RunLogSink } from '../src/ports/run-log.ts';
export type { LogFormat } from '../src/runtime/log-format.ts';
export type { DeclarationDiff } from '../src/domain/approval.ts';
export type { Permissions } from '../src/domain/permission-declaration.ts';
export type { EventView, EventFilter, ScheduleView, SlotView, SlotFilter } from '../src/ports/triggers.ts';
export type { SlotFate, CatchUpPolicy } from '../src/domain/schedule.ts';
export type { RunView, StepView, RunFilter, StepKind, StepStatus, CancelInfo, RunId, TypedRunView } from '../src/domain/run-view.ts';
export type { RunStatus } from '../src/domain/run-status.ts';
export type { Explanation } from '../src/domain/explain.ts';
export type { CapabilitiesApi, CapabilityHandler, ProviderCallInfo } from '../src/runtime/capabilities.ts';
export type { Attrs, AttrValue } from '../src/domain/capability.ts';
export type { LifecycleEvent, LifecycleEventType, LifecycleHandler } from '../src/runtime/notifier.ts';
export type { StepEvent, StepEventType, StepEventHandler } from '../src/runtime/step-events.ts';
export type { PublishedValue } from '../src/domain/published-state.ts';
export type { StreamItem } from '../src/runtime/live-output.ts';
export type { RetryOptions, RetryResult, RecordedStepInfo } from '../src/domain/retry-point.ts';
export type { ForkOptions, ForkResult } from '../src/domain/run-fork.ts';
export {
  TerminalError, TimeoutError, CancelledError, NonDeterminismError, ValidationError, UnknownWorkflowError, UnknownRunError,
  RunStateError, SerializationError, NotSupportedError, StorageError, DataDirInUseError, EngineStateError, BackendUnavailableError,
} from '../src/domain/errors.ts';

export { plainWorkflow, type PlainWorkflowDefinition, type PlainWorkflowOptions } from '../src/runtime/plain/plain-workflow.ts';
export { loadPlainWorkflow, type PlainDefinition, type PlainStep } from '../src/runtime/plain/load.ts';
export { PlainWorkflowError } from '../src/runtime/plain/plain-error.ts';
export type { Action, Actions, ActionContext } from '../src/runtime/plain/compile.ts';
export { createPanel, servePanel, type HeldRun, type Panel, type PanelHolds, type PanelOptions } from './panel.ts';
export { attach, findService, type AttachOptions, type ServiceAddress, type ServiceClient } from './attach.ts';
// A stored value (runs.get, `--json`, .tqrun) back to what the code gave, or as readable text.
export { decodeValue } from '../src/domain/value-codec.ts';
export { valueText } from '../src/domain/value-text.ts';

/** Builds an engine from config. Call `await engine.start()` before use. */
export async function createEngine(config: EngineConfig = {}): Promise<Engine> {
  const resolved = resolveConfig(config);
  return buildContainer(resolved, { ...(await loadBackend(resolved)), ...(await loadRunner(resolved)) }).get<Engine>(TOKENS.engine);
}
