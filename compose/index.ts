// @tranquil/engine: createEngine(config). Usage: README.md; layers: docs/architecture.md.
import { buildContainer, loadBackend, loadRunner, TOKENS } from './container.ts';
import { resolveConfig, type EngineConfig } from './config.ts';
import type { Engine } from '../src/runtime/engine.ts';

export type { EngineConfig } from './config.ts';
export type { Engine, RunsApi, RunList, EventsApi, SchedulesApi } from '../src/runtime/engine.ts';
export type { EventView, EventFilter, ScheduleView, SlotView, SlotFilter } from '../src/ports/triggers.ts';
export type { SlotFate, CatchUpPolicy } from '../src/domain/schedule.ts';
export type { RunView, StepView, RunFilter } from '../src/domain/run-view.ts';
export type { RunStatus } from '../src/domain/run-status.ts';
export type { Explanation } from '../src/domain/explain.ts';
export type { CapabilitiesApi, CapabilityHandler, ProviderCallInfo } from '../src/runtime/capabilities.ts';
export type { Attrs } from '../src/domain/capability.ts';
export type { LifecycleEvent, LifecycleEventType, LifecycleHandler } from '../src/runtime/notifier.ts';
export type { RetryOptions, RetryResult } from '../src/domain/retry-point.ts';
export {
  TerminalError, TimeoutError, CancelledError, NonDeterminismError, ValidationError, UnknownWorkflowError, UnknownRunError,
  RunStateError, SerializationError, NotSupportedError, StorageError, DataDirInUseError, EngineStateError, BackendUnavailableError,
} from '../src/domain/errors.ts';

export { plainWorkflow, type PlainWorkflowDefinition, type PlainWorkflowOptions } from '../src/runtime/plain/plain-workflow.ts';
export { loadPlainWorkflow, type PlainDefinition } from '../src/runtime/plain/load.ts';
export { PlainWorkflowError } from '../src/runtime/plain/plain-error.ts';
export type { Action, Actions, ActionContext } from '../src/runtime/plain/compile.ts';
export { createPanel, servePanel, type Panel, type PanelOptions } from './panel.ts';
export { attach, findService, type AttachOptions, type ServiceAddress, type ServiceClient } from './attach.ts';

/** Builds an engine from config. Call `await engine.start()` before use. */
export async function createEngine(config: EngineConfig = {}): Promise<Engine> {
  const resolved = resolveConfig(config);
  return buildContainer(resolved, { ...(await loadBackend(resolved)), ...(await loadRunner(resolved)) }).get<Engine>(TOKENS.engine);
}
