// Slot grants a workflow file's child did not use (docs/flow-control.md, In workflow files).
// An honest child begins the step's attempt in the same turn its grant arrives (runner/
// wire-log.ts askSlot -> RunSession.queued -> attempt frame), or, cancelled or finished
// meanwhile, ends its execution in that turn (its outcome frame releases every slot); only a
// blocked event loop delays either, and a loop blocked for the heartbeat timeout gets the
// child killed anyway. So a
// grant still unused past that long is withheld from the app's own runs for nothing: it is
// released (its late attempt, if one comes, fails and is retried by the step's policy).
// Counted per version of the file, across its runs in this process: a file that keeps doing
// it (MAX_UNUSED_GRANTS) fails the execution, and every later slot ask of that version fails
// its run, so a file cannot hoard by starting many short runs either.

/** Unused grants after which a version of a file gets no more slots (in this process). */
export const MAX_UNUSED_GRANTS = 3;

export class UnusedGrants {
  private count = 0;
  private last = '';

  /** Counts one; true once the version has reached the bound. */
  add(what: string): boolean {
    this.count++;
    this.last = what;
    return this.barred;
  }

  get barred(): boolean {
    return this.count >= MAX_UNUSED_GRANTS;
  }

  /** The one line a run of a barred version fails with. */
  reason(file: string, deadlineMs: number): string {
    return `workflow file ${file}: ${this.count} of its slot grants went unused (no step attempt began within ${deadlineMs}ms of the grant; last ${this.last}): a file holding queue slots it does not use gets no more slots until the engine restarts`;
  }
}
