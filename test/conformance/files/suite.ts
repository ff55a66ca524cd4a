// The conformance suite through the Deno runner: ONE function each backend runs from a
// few-line test file (files-sqlite.test.ts; files-restate-a/-b.test.ts, half each). Every case is a case of
// the in-process suite (same name, same assertions) with its workflow as a file; the suite's
// cases that are not about workflow code (CLI, API argument checks, webhooks, paging) are
// listed in NOT_FOR_FILES with the reason, so the mapping stays visible.
import { afterAll, afterEach, describe, it } from 'vitest';
import { partFilter, type SuitePart } from '../suite.ts';
import { disposeWarmDirs, Rigs, type Backend, type FlowRig } from './harness.ts';
import { coreFileScenarios } from './core.ts';
import { moreFileScenarios } from './more.ts';
import { triggerFileScenarios } from './triggers.ts';
import { portedFileScenarios } from './ported.ts';
import { valueFileScenarios } from './values.ts';
import { schemaFileScenarios } from './schemas.ts';
import { childFileScenarios } from './children.ts';
import { controlFileScenarios } from './control.ts';
import { controlRunFileScenarios } from './control-runs.ts';
import { forkFileScenarios } from './control-fork.ts';
import { workflowPauseFileScenarios } from './control-workflow-pause.ts';
import { logFileScenarios } from './logs.ts';
import { liveOutputFileScenarios } from './live-output.ts';
import { queueFileScenarios, runFlowFileScenarios } from './queues.ts';

export interface FileKit {
  backend: Backend;
  test(name: string, fn: () => Promise<void>, timeout?: number): void;
  /** A case that runs at the same time as its neighbours (it.concurrent): it must use no
   *  engine of `boot`, which is cleaned up after each case. */
  concurrent(name: string, fn: () => Promise<void>, timeout?: number): void;
  boot: Rigs['boot'];
}

/** In-process suite cases with no file form, and why (docs/runner.md, Conformance). */
export const NOT_FOR_FILES: Record<string, string> = {
  'step events from an offset: Restate keeps a run\'s events and reads them again from 0 after a restart, both executions in order; SQLite refuses `from` in one line': 'the log is the executing engine\'s (it appends what its sessions emit, a file\'s child included: files/live-output.ts covers a file\'s step events); no workflow code involved',
  'bad engine calls get one clear error each': 'argument checks of the engine API: no workflow code involved',
  'stop() ends a pending result() with an error instead of leaving it waiting': 'an engine API behaviour, the same whatever runs the code',
  'runs.list pages with a cursor: every run once, newest first, `next` only while more match': 'paging of the run reader: no workflow code involved',
  'runs.list since/until: only runs created in the window, inclusive, paged': 'a filter of the run reader: no workflow code involved',
  'CLI runs list / describe / why say what the engine API says, while the engine runs': 'the CLI reads the same run views for both kinds of workflow',
  'cli: runs list --debounced, why and runs describe show a pending debounce burst (workflow, key, triggers collected, when it starts) before its run exists': 'the CLI reads the same burst rows for both kinds of workflow (files/queues.ts debounces a file\'s runs through the engine)',
  'cli: runs describe and why show a fork and its original, linked both ways, as the engine does': 'the CLI reads the same run views for both kinds of workflow (files/control-fork.ts forks a file\'s run through the engine)',
  'cli: runs describe shows values readably (a Map as its entries, a Date as ISO, a BigInt as 10n); --json keeps the stored form, lossless': 'the CLI renders the stored run views, whatever ran the code',
  'after the engine stops, the CLI reads the file (sqlite) or says no restate-server is running (restate)': 'the CLI reads the same run views for both kinds of workflow',
  'cli: runs stream prints chunks from --from and --follow follows live until the close; runs state --wait waits for a key; bad stream, offset, duration, run: one line each': 'the CLI reads the same run views for both kinds of workflow (files/live-output.ts reads a file\'s state and stream)',
  'an input, event or signal payload over the size limit is refused at the API and nothing is stored': 'checked at the engine API, before any code runs',
  'an input, event or signal payload that cannot be stored is refused at the API, naming the path; nothing is stored': 'checked at the engine API, before any code runs',
  'the size limit is engine config (maxPayloadBytes), the same for results and arguments': 'engine config; the file form of the result limit is ported',
  'notifications: run.succeeded, run.failed and run.retrying, each transition once': 'host-side notifications read run views, whatever ran the code',
  'notifications: after a restart the host gets what it missed, not what it already had': 'host-side notifications read run views, whatever ran the code',
  'why: sleeping, waiting, retrying, failed, cancelled and succeeded runs read the same on every backend': 'explanations read run views, whatever ran the code',
  'why: a run whose code changed under it names the position, the call and the record': 'explanations read run views; the file form of non-determinism is ported',
  'why: a cancelled run says who asked to cancel it and when': 'who asked is recorded at the engine API, whatever ran the code',
  'with a key configured no payload is stored in plain text (control: without one it is)': 'the payload codec sits in the backends\' storage, below the step log a child is served',
  'a rotated keyring reads runs the old key wrote; new writes use the new key': 'the payload codec sits in the backends\' storage, below the step log a child is served',
  'a missing or wrong key is refused in one line and changes nothing': 'checked at engine start, before any code runs',
  'replay check: an in-flight run passes against its code and is flagged against a reordered step': 'tranquil check replays code workflows in-process; files are checked by their snapshot',
  'plain: start runs children side by side and result awaits each later; result names only an earlier start step': 'plain-data workflows are data run in-process, not files',
  'streams from a step body: chunks read live (provisional) before the step ends, stored with its result, read plain once committed': 'a file\'s body chunks travel in its step\'s result: no provisional chunks come from a child (docs/live-output.md); the stored rule is files/live-output.ts "files: a step body streams ..."',
  "a retried body's chunks: 3 written then failed, 5 on the retry: readers see a rewind live and exactly the 5 stored, once; a restart replays them, writing and telling nothing again": 'the live part (rewind) has no file form (no provisional chunks from a child); the stored rule, a failed attempt\'s chunks not stored, is files/live-output.ts "files: a step body streams ..."',
  'plain: the reference definition skips an activated user and nudges one that is not, once, with key nudge/<run id>': 'plain-data workflows are data run in-process, not files',
  'plain: a transient mail failure twice, then success: three attempts, one key': 'plain-data workflows are data run in-process, not files',
  'plain: a declared non-retryable failure (HTTP 4xx) and a TerminalError each fail the run after one attempt': 'plain-data workflows are data run in-process, not files',
  'plain: a run waiting on v1 keeps v1 after a restart registers v2; new runs start on v2': 'plain-data workflows are data run in-process, not files',
  'plain: a fork of a v1 run, after a restart registers v2, runs the v1 code from the fork point (the version is the original one)': 'plain-data workflows are data run in-process, not files',
  'plain: debounce: a burst of events per key becomes one run with the last payload; a bad debounce is refused at load in one line': 'plain-data workflows are data run in-process, not files',
  'plain: queue: an action holds a slot of its queue while it runs: never more than concurrency at once, per key; runs.singleton skips a run of an unfinished key': 'plain-data workflows are data run in-process, not files',
  'plain: invoke runs a registered workflow as a child; its output feeds later steps; a failed child fails the run; an unknown one is refused at build': 'plain-data workflows are data run in-process, not files',
  'capability: parks with no provider, explains why, survives a restart, resumes only on a matching provider': 'providers are host-side; a file reaches one through the engine: test/deno/capability.test.ts',
  'capability: provider errors retry like step.do, a TerminalError is caught by the code, a withdrawn provider parks the run': 'providers are host-side; a file reaches one through the engine: test/deno/capability.test.ts',
  'capability: cancelling a parked run throws CancelledError into the parked step (its cleanup runs); bad names are refused; a parked branch beside a wait resumes': 'providers are host-side; a file reaches one through the engine: test/deno/capability.test.ts',
  'capability: a run failed in step.use is retried at that step; the provider is asked again': 'the retry point is chosen from the journal at the engine (domain/retry-point.ts) and providers are host-side, whatever ran the code',
  'a step called while another is in flight starts its body at once, also after the code awaited a plain timer': 'the file form is the race of two step.do (frames arrive in different turns)',
  '100 signals sent at once to a waiting run: each consumed once, in one order that replay keeps': 'ported with 20 signals (a child per replay makes 100 slow)',
};

/** In-process suite cases that apply to files and are not ported yet (issue 11). A test
 *  (coverage.test.ts) keeps every in-process case in one of the three lists. */
export const NOT_YET_PORTED: string[] = [
  // issues 38, 46, 47: the order rules these check live in RunSession, which a file's run
  // child uses too (runner/wire-log.ts is its step log); not ported one by one yet.
  'repeated step names in concurrent branches keep their own results across a restart',
  'a cleanup waitForEvent after a cancel keeps waiting in a later execution, and repeated cleanup names keep their own results',
  'a wait past its deadline does not take a signal an earlier open wait of its name is owed',
  'of two open waits of a name, the first times out: the next signal goes to the second',
  'an open wait of another name does not hold a due wait back from its own signal',
  'a wait that timed out between two signals takes neither: the next wait of the name gets the second',
  'a retry between two signals keeps their order: the open waits take them, a later due wait neither',
  'a wait the cancel ended is no longer open: a cleanup wait of its name takes the next signal',
  // issue 40: files reach child runs through the runner protocol; files/children.ts covers one
  // file invoking another and a signal between them; these cases are not ported one by one yet.
  'step.invoke runs a child and returns its output; parent and child views show the link',
  'step.start returns the child run id at once; step.result awaits it later',
  'a fan-out of children with Promise.all: one run per child, outputs in call order',
  'a failed child reaches the parent as ChildRunError with the child error as cause',
  'a child still running past the invoke timeout gives TimeoutError in the parent',
  'cancelling a parent cancels its children, whose cleanup runs; an abandoned child runs on',
  'retrying a failed parent reuses succeeded children and retries the failed child in place',
  'grandchildren: a child invokes its own child; why names the child a parent waits for',
  'a call cycle and runaway recursion are refused with a clear error',
  'ctx.signal between runs: a child tells its parent it is half done, the parent answers',
  'a parent restarted while it waits finds the same child when it ends',
  'a fan-out of 100 children restarted while they wait: the parent replays and gets every output in call order',
  'cli: runs list --parent, runs describe and why show a parent waiting for its child, as the engine does',
  'a child handle awaited again (in sequence, in parallel, after a timeout) gives the same end',
  // issue 43: the peers' snippets, ported in-process first (test/conformance/peer-ports.ts).
  'DBOS messaging ported: a message sent to the workflow ID (also before the wait) or the timeout decides',
  'Temporal approval pattern ported: decision by signal with its metadata, or the timeout path',
  // issue 43: handleWebhook runs the listener's own handler (webhook-listener.ts), whose file
  // cases are ported; the mounted form is not ported as a case of its own yet.
  'webhook mounted in the app: engine.handleWebhook answers as the listener (202, redelivery, 404, 413, 400, 415)',
  // issue 41: run control through a file is ported (files/control.ts, files/control-runs.ts);
  // the CLI's view of a paused run is the engine's, not tried through a file.
  'cli: runs describe and why show a paused run (who paused it, when) as the engine does',
  // Workflow pause (issue 41) holds a run before its code runs, in the insert (SQLite) or the
  // run handler (Restate), the same for a file's run (files/control-workflow-pause.ts ports
  // two cases); the event and schedule slot case is not ported yet.
  'workflow pause holds an event and a schedule slot (one run per event id); resume runs them in creation order',
  "cli: why of a run held by its workflow's pause, and why <workflow>, say the workflow is paused",
  // engine.queues.list reads the queue state the engine holds for a file's steps as for any
  // (files/queues.ts covers the slot path); not ported as a case of its own.
  'queues.list: running against the limit, the depth, the busiest keys and the rate window; internal queues only with all',
  // A rate limit counted when the body begins is the engine's slot path, the same for a file's
  // step (files/queues.ts ports the rate-window case); not ported one by one yet.
  'queue: a rate limit counts a body when it begins: waiters of a stopped engine do not start together after the restart',
  // A cancel delivered while a step waits for a rate window is the engine's cancel and slot
  // path, whatever runs the step's code; not ported one by one yet.
  'queue: a run cancelled while its step waits for a rate window ends at once; the next in line gets that window',
  // Run-level flow control (issue 39): a file's options.runs is data (keys and priority by
  // fromInput()), applied by the same engine code: files/queues.ts covers a run in line, a
  // singleton skip per key and priority order in cases of its own, not ported one by one.
  'run queue: never more runs at once than the limit, in the queue and per key, sleeping included',
  'run queue: a run over the limit waits pending in line (why, runs list); a cancel in line ends it; a restart keeps the holder and the order',
  'run queue: a key function that throws or returns no string is refused at trigger time, naming it; nothing is stored',
  'run queue: a step asking for the queue its run holds fails in one line naming it (it would wait for itself); another queue is fine',
  'run queue: priority: higher first among the runs in line, over the keys turns; kept across a restart; a bad priority is refused at trigger',
  // Run-level debounce (issue 39): a file's debounce is data applied by the same engine code;
  // files/queues.ts covers a burst per key in a case of its own, these are not ported one by one.
  'debounce collapses a burst of 50 triggers into one run with the last input',
  "debounce: maxWait bounds the delay of a burst that never goes quiet; each run has its burst's last input",
  'debounce: separate keys debounce separately',
  'debounce: a pending burst survives an engine restart and runs once with its last input',
  'debounce: a key function that throws or returns no string is refused at trigger, nothing stored',
  'debounce (events): a burst of 50 events with one key becomes one run with the last payload',
  'debounce (events): two keys become two runs, each with its own last payload',
  'debounce (events): a redelivered event id neither replaces the burst input nor starts another run',
  'debounce (webhooks): deliveries with one key become one run; a redelivered Idempotency-Key changes nothing',
  'debounce (events): maxWait bounds a burst of events that never goes quiet',
  'debounce (events): a burst of events survives an engine restart and runs once with its last payload',
  'run flow: singleton skip: a run asked while one of its key is unfinished (across a restart) is skipped with the reason; other keys and later runs start; bad config refused',
  'run flow: singleton cancel: a new run cancels the unfinished one of its key (its cleanup runs), then starts; a burst leaves one',
  'run flow: singleton cancel: a burst of five started at once leaves exactly one, every other run ends cancelled (none failed), no slot left held',
  'run flow: rate limit drops the starts over the limit, per key, recorded as skipped with the reason (runs list, why); bad config refused',
  "run flow: a rate limit counts a run once, also when it then waits in its queue's line: runs within the limit all start",
  'run flow: throttle spreads starts: a rate-limited queue as runs.queue delays starts; no window of the period holds more than the limit',
  // issue 41: live output. ctx.publish and ctx.stream go through the runner protocol (an attempt
  // and a record); files/live-output.ts covers them in one case of its own, these are not ported
  // one by one. Step events are ported (files/live-output.ts).
  'published state: read while the run waits and after it ends, the latest value wins, a restart republishes nothing, Map and Date survive',
  'a wait for a published key times out with TimeoutError while the run publishes nothing',
  'streams: a reader gets every chunk in order, live while the run goes on, ending at close; read again from offset 0 after a restart, no duplicate or missing chunk',
  "cli: runs state reads a live run's published state as the engine does (--json: the stored form); a key never published exits 1",
];

/** `part`: register only that part of the cases (see SuitePart), to split one backend's suite
 *  across test files that run at the same time. */
export function runFileConformance(backend: Backend, skip: { reason: string; tests: string[] }[] = [], part?: SuitePart): void {
  const skipped = new Map<string, string>();
  for (const s of skip) for (const t of s.tests) skipped.set(t, s.reason);
  const inPart = partFilter(part);
  describe(`conformance through the runner: ${backend}${part ? ` (part ${part.index} of ${part.of})` : ''}`, () => {
    const rigs = new Rigs(backend);
    afterEach(() => rigs.cleanup());
    afterAll(() => disposeWarmDirs());
    const test = (name: string, fn: () => Promise<void>, timeout = 90_000) => {
      if (!inPart()) return;
      const reason = skipped.get(name);
      if (reason) it.skip(`${name} [skipped: ${reason}]`, fn);
      else it(name, fn, timeout);
    };
    const concurrent = (name: string, fn: () => Promise<void>, timeout = 90_000) => {
      if (!inPart()) return;
      const reason = skipped.get(name);
      if (reason) it.skip(`${name} [skipped: ${reason}]`, fn);
      else it.concurrent(name, fn, timeout);
    };
    const kit: FileKit = { backend, test, concurrent, boot: (bodies, config) => rigs.boot(bodies, config) };
    coreFileScenarios(kit);
    moreFileScenarios(kit);
    triggerFileScenarios(kit);
    portedFileScenarios(kit);
    valueFileScenarios(kit);
    schemaFileScenarios(kit);
    childFileScenarios(kit);
    controlFileScenarios(kit);
    controlRunFileScenarios(kit);
    forkFileScenarios(kit);
    workflowPauseFileScenarios(kit);
    logFileScenarios(kit);
    liveOutputFileScenarios(kit);
    queueFileScenarios(kit);
    runFlowFileScenarios(kit);
  });
}

export type { FlowRig };
