// The child's end of the step protocol's transport: connects to the engine on loopback,
// presents its token (the raw token line, before any frame), then reads and writes frames.
// Writes are queued so frames never interleave; a frame that cannot be read ends the child.
import { LineSplitter, childFrameSchema, decodeFrame, encodeFrame, engineFrameSchema, FRAME_ENVELOPE_BYTES, type ChildFrame, type EngineFrame } from '../src/domain/runner-protocol.ts';

export class Connection {
  private writing: Promise<void> = Promise.resolve();
  private readonly encoder = new TextEncoder();
  private readonly splitter: LineSplitter;
  private queue: EngineFrame[] = [];
  private waiter: ((f: EngineFrame | undefined) => void) | undefined;
  private ended = false;
  private onFrame: ((f: EngineFrame) => void) | undefined;
  onEnd: ((err: Error) => void) | undefined;
  /** Engine frames received so far; frames sent so far (for `idle`). */
  received = 0;
  sent = 0;

  private constructor(private readonly conn: Deno.Conn, maxPayloadBytes: number) {
    this.splitter = new LineSplitter(maxPayloadBytes + FRAME_ENVELOPE_BYTES, 'engine');
  }

  /** `maxPayloadBytes` bounds every frame (plus its envelope), as on the engine's side. */
  static async open(port: number, token: string, maxPayloadBytes: number): Promise<Connection> {
    const conn = await Deno.connect({ hostname: '127.0.0.1', port });
    // Small request/reply frames: Nagle's algorithm would hold each back for the peer's ACK.
    conn.setNoDelay(true);
    const c = new Connection(conn, maxPayloadBytes);
    await c.writeAll(c.encoder.encode(`${token}\n`));
    void c.readLoop();
    return c;
  }

  /** The next frame, before a handler is installed (the hello and the journal). */
  next(): Promise<EngineFrame | undefined> {
    const f = this.queue.shift();
    if (f || this.ended) return Promise.resolve(f);
    return new Promise((r) => (this.waiter = r));
  }

  /** From now on every frame goes to `handler` (first those that arrived meanwhile). */
  listen(handler: (f: EngineFrame) => void): void {
    this.onFrame = handler;
    for (const f of this.queue.splice(0)) handler(f);
  }

  send(f: ChildFrame): void {
    // Checked on the way out too: the engine would refuse it anyway, this names the cause here.
    decodeFrame(childFrameSchema, JSON.stringify(f), 'child');
    this.sent++;
    const bytes = this.encoder.encode(encodeFrame(f));
    this.writing = this.writing.then(() => this.writeAll(bytes));
  }

  /** Waits for every queued frame to be written, then closes. */
  async close(): Promise<void> {
    await this.writing.catch(() => {});
    try {
      await this.conn.closeWrite();
    } catch {
      /* already closed */
    }
  }

  private async writeAll(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.length) at += await this.conn.write(bytes.subarray(at));
  }

  private async readLoop(): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    let error: Error = new Error('the engine closed the step connection');
    try {
      for (;;) {
        const n = await this.conn.read(buf);
        if (n === null) break;
        for (const line of this.splitter.push(buf.slice(0, n))) this.deliver(decodeFrame(engineFrameSchema, line, 'engine'));
      }
    } catch (err) {
      error = err as Error;
    }
    this.ended = true;
    this.waiter?.(undefined);
    this.onEnd?.(error);
  }

  private deliver(f: EngineFrame): void {
    this.received++;
    if (this.onFrame) return this.onFrame(f);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      return w(f);
    }
    this.queue.push(f);
  }
}
