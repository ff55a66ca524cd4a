// The lifecycle rules of child runs that span two runs (docs/children.md), carried out by the
// engine over the executor port so every backend follows them the same way:
// - cancel: cancelling a run cancels its unfinished children started with the default
//   policy (`onParentCancel: 'cancel'`), and theirs in turn; each child's cleanup runs.
// - retry: retrying a failed parent resumes it at its earliest wait that received a failed
//   child's end (or the usual retry point, whichever is earlier), retries that child in place
//   (same run id: no duplicate), and sends again the end of every finished child whose
//   recorded wait the retry discarded, so the parent's new wait gets it. Succeeded children
//   whose waits are kept replay from the parent's journal and run nothing.
// - why: a parent waiting for a child says which child and what that child is doing.
import { childEnd, childOfSignal, childSignal, isChildEnd } from '../domain/child-runs.ts';
import { RunStateError, UnknownRunError } from '../domain/errors.ts';
import type { Explanation } from '../domain/explain.ts';
import type { Json } from '../domain/json.ts';
import { retryPlan, type RetryOptions, type RetryResult } from '../domain/retry-point.ts';
import { isTerminal } from '../domain/run-status.ts';
import type { RunView } from '../domain/run-view.ts';
import type { DurableExecutor } from '../ports/executor.ts';

type Exec = Pick<DurableExecutor, 'getRun' | 'listRuns' | 'cancel' | 'retry' | 'signal'>;

const PAGE = 1000;

/** The unfinished children of `runId` that a cancel of it reaches. */
async function cancellableChildren(ex: Exec, runId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await ex.listRuns({ parent: runId, limit: PAGE, ...(cursor ? { cursor } : {}) });
    for (const r of page.runs) if (!isTerminal(r.status) && r.parent?.onParentCancel !== 'abandon') ids.push(r.runId);
    cursor = page.next;
  } while (cursor);
  return ids;
}

/** After `runId` was asked to cancel: the same cancel reaches its children (and theirs). */
export async function cascadeCancel(ex: Exec, runId: string): Promise<void> {
  for (const id of await cancellableChildren(ex, runId)) {
    try {
      await ex.cancel(id, `parent run ${runId}`.slice(0, 200));
    } catch (err) {
      // Ended meanwhile: nothing to cancel.
      if (err instanceof RunStateError || err instanceof UnknownRunError) continue;
      throw err;
    }
    await cascadeCancel(ex, id);
  }
}

/** runs.retry of a run that may have children (see the header). */
export async function retryWithChildren(ex: Exec, runId: string, options: RetryOptions): Promise<RetryResult> {
  const before = await ex.getRun(runId);
  if (!before || before.status !== 'failed' || !before.children?.length) return ex.retry(runId, options);
  let from = options.from;
  if (from === undefined) {
    const failedWait = before.steps.find((s) => s.kind === 'wait' && s.status === 'succeeded' && isChildEnd(s.result) && (s.result as { status: string }).status === 'failed');
    const usual = retryPlan(before.steps)?.from;
    if (failedWait && (!usual || failedWait.seq < usual.seq)) from = failedWait.name;
  }
  const result = await ex.retry(runId, from === undefined ? {} : { from });
  const gone = new Set(result.discarded.map((d) => d.seq));
  // Children whose end the kept journal holds need nothing; the others are retried (failed)
  // or have their end sent again (finished), since a retried parent waits for them anew.
  const kept = new Set(before.steps.filter((s) => !gone.has(s.seq) && s.kind === 'wait' && s.status === 'succeeded').map((s) => childOfSignal(s.name)));
  for (const c of before.children) {
    if (kept.has(c.runId)) continue;
    const child = await ex.getRun(c.runId);
    if (!child || !isTerminal(child.status)) continue;
    if (child.status === 'failed') await retryWithChildren(ex, c.runId, {});
    else await resend(ex, runId, c.runId, child);
  }
  return result;
}

/** Sends a finished child's end to its retried parent again. The parent may have finished
 *  first (on Restate it can take a child's end without this signal, racing this loop): then it
 *  needs nothing, and the refusal is no error of the retry. */
async function resend(ex: Exec, parentId: string, childId: string, child: RunView): Promise<void> {
  try {
    await ex.signal(parentId, childSignal(childId), endOf(child));
  } catch (err) {
    if (err instanceof RunStateError && isTerminal((await ex.getRun(parentId))?.status ?? 'pending')) return;
    throw err;
  }
}

function endOf(v: RunView): Json {
  const status = v.status as 'succeeded' | 'failed' | 'cancelled';
  return childEnd(v.runId, status, { workflow: v.workflow, output: v.output, error: v.error }) as Json;
}

/** `why` of a run waiting for a child: names the child and says what it is doing (as its own
 *  `why` says it, so a chain of waiting parents reads down to the run that holds it up). */
export async function explainWaitingParent(ex: Pick<Exec, 'getRun'>, e: Explanation, explainRun: (v: RunView) => Promise<Explanation>): Promise<Explanation> {
  const step = e.waitingFor?.kind === 'signal' ? e.waitingFor.step : undefined;
  const childId = step === undefined ? undefined : childOfSignal(step);
  if (childId === undefined) return e;
  const child = await ex.getRun(childId);
  const head = e.summary.slice(0, e.summary.indexOf(' is waiting'));
  if (!child) return { ...e, summary: `${head} is waiting for child run ${childId}, which is not found (removed by retention?).` };
  const c = await explainRun(child);
  const until = e.waitingFor?.until ? `, timing out at ${e.waitingFor.until}` : '';
  return {
    ...e,
    summary: `${head} is waiting for child run ${childId} of '${child.workflow}'${until}, which ${stateOf(c.summary, child)}`,
    next: `See the child: \`tranquil why ${childId}\`.`,
  };
}

/** The child's own explanation without its head ("Run X of workflow 'w' (version v)"):
 *  "is retrying step 'charge' ...", "failed: ...". */
function stateOf(summary: string, child: RunView): string {
  const m = /^Run \S+ of workflow '.*?' \(version [^)]*\) ([\s\S]*)$/.exec(summary);
  return m ? m[1]! : `is ${child.status} (${summary})`;
}
