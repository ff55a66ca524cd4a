// The lease an attached app keeps by long-polling the serve (remote providers, remote
// step-event subscriptions): each poll renews it, a poll waits until woken or its time is
// up, and an app that has not polled for the lease's length is dropped.

export interface Leased {
  /** When the app last polled (or its poll ended). */
  lastSeen: number;
  /** Ends the poll waiting now, if one is. */
  wake?: () => void;
}

/** Waits until `l.wake()` is called or min(waitMs, maxMs) passed. */
export function waitForWake(l: Leased, waitMs: number, maxMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(done, Math.min(waitMs, maxMs));
    function done() {
      clearTimeout(t);
      if (l.wake === done) l.wake = undefined;
      resolve();
    }
    l.wake = done;
  });
}

/** Drops (by `drop`) each entry whose app has not polled for longer than leaseMs; one with a
 *  poll waiting right now counts as seen now. */
export function expireLeases(entries: ReadonlyMap<string, Leased>, leaseMs: number, drop: (id: string) => void): void {
  const now = Date.now();
  for (const [id, l] of entries) {
    if (l.wake) l.lastSeen = now; // a poll is waiting right now: the app is there
    else if (now - l.lastSeen > leaseMs) drop(id);
  }
}
