// The entry logic of a Deno run child: authenticate to the engine with the single-use token
// from the environment, receive the run's journal, run the ONE replay engine (RunSession) on
// the workflow module's definition through a WireLog, send the outcome, exit. The generated
// entry of a snapshot imports the workflow module and calls runChild (see
// src/adapters/deno/snapshot.ts). Exit codes: 0 outcome sent, 2 bad start, 3 protocol error.
import { toErrorInfo, type ErrorInfo } from '../src/domain/errors.ts';
import type { JournalEntry } from '../src/domain/journal.ts';
import { RUNNER_TOKEN_ENV, type WireOutcome } from '../src/domain/runner-protocol.ts';
import { RunSession } from '../src/runtime/run-session.ts';
import { withOutputSchema } from '../src/runtime/boundary-schemas.ts';
import { isWorkflowDefinition } from '../sdk/workflow.ts';
import { Connection } from './connection.ts';
import { WireLog } from './wire-log.ts';
import { wireRunLog } from './wire-run-log.ts';

function die(code: number, message: string): never {
  console.error(`tranquil runner: ${message}`);
  Deno.exit(code);
}

export async function runChild(mod: { default?: unknown }, port: number, maxPayloadBytes: number): Promise<void> {
  const def = mod.default;
  if (!isWorkflowDefinition(def)) die(2, 'the workflow file has no default export made by workflow()');
  const token = Deno.env.get(RUNNER_TOKEN_ENV);
  if (!token) die(2, `${RUNNER_TOKEN_ENV} is not set`);
  Deno.env.delete(RUNNER_TOKEN_ENV);
  const conn = await Connection.open(port, token, maxPayloadBytes);
  conn.onEnd = (err) => die(3, err.message);
  const hello = await conn.next();
  if (hello?.t !== 'hello') die(3, `expected the hello frame, got ${hello ? `'${hello.t}'` : 'the end of the connection'}`);
  const entries: JournalEntry[] = [];
  const outside = new Set<number>();
  for (let i = 0; i < hello.entries; i++) {
    const f = await conn.next();
    if (f?.t !== 'entry') die(3, `expected journal entry ${i + 1} of ${hello.entries}, got ${f ? `'${f.t}'` : 'the end of the connection'}`);
    entries.push(f.entry as JournalEntry);
    if (f.outside) outside.add(f.entry.seq);
  }
  const log = new WireLog(hello, entries, (f) => conn.send(f), outside);
  // caps.settle: after reacting to what arrived, say so. Quiet = two timer turns in a row
  // with no frame in or out (the session hands results out one event-loop turn at a time).
  let watching = false;
  const settle = () => {
    if (!hello.caps.settle || watching) return;
    watching = true;
    let mark = -1;
    let quiet = 0;
    const check = () => {
      const now = conn.received + conn.sent;
      quiet = now === mark ? quiet + 1 : 0;
      mark = now;
      if (quiet < 2) return void setTimeout(check, 0);
      watching = false;
      conn.send({ t: 'idle', seen: conn.received });
    };
    setTimeout(check, 0);
  };
  conn.listen((f) => {
    try {
      log.receive(f);
    } catch (err) {
      die(3, (err as Error).message);
    }
    settle();
  });
  conn.onEnd = (err) => {
    log.lost(err);
    die(3, err.message);
  };
  // Liveness: a body or code that blocks this child's event loop stops these, and the
  // engine's watchdog kills the child by its PID.
  const beat = setInterval(() => conn.send({ t: 'heartbeat' }), hello.heartbeatMs ?? 1000);
  Deno.unrefTimer(beat as unknown as number); // Node's typings say Timeout; Deno's is a number
  // The output schema runs here, where the file's code is (docs/values.md, Schemas).
  // ctx.log / info.log lines go to the engine, which tags and writes them (hello.runLog: the
  // lowest level it writes; absent, none).
  const runLog = wireRunLog(hello.runLog, (f) => conn.send(f));
  const session = new RunSession(log, withOutputSchema(def, def.fn), def.stepDefaults, { maxPayloadBytes: hello.maxPayloadBytes, cancelGraceMs: hello.cancelGraceMs, runLog });
  const running = session.run();
  settle(); // the reactions to hello and the journal
  const outcome = await running;
  const wire: WireOutcome =
    outcome.type === 'interrupted' ? { type: 'interrupted', cause: toErrorInfo(outcome.cause) as ErrorInfo } : outcome;
  conn.onEnd = undefined;
  conn.send({ t: 'outcome', outcome: wire, cancelDelivered: session.cancelDelivered });
  await conn.close();
  // Workflow code may have left timers or sockets behind: the run is over, so is the child.
  Deno.exit(0);
}
