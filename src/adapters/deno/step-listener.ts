// The engine's end of the step protocol's transport: one TCP listener on 127.0.0.1 (port 0,
// any free port) that run children connect to. A connection first presents its single-use
// token as TOKEN_LINE_BYTES raw bytes; nothing else is read before the token is checked, and
// any failure (wrong, reused or expired token, too slow, closed early) closes the connection.
// Only an authenticated connection is handed on, to the session the token was issued for.
import { createServer, type Server, type Socket } from 'node:net';
import { TOKEN_LINE_BYTES } from '../../domain/runner-protocol.ts';
import { TokenBook } from './token-book.ts';

export interface StepListenerOptions {
  /** An unclaimed token expires after this long (default 10 s: a child starts in ~20 ms). */
  tokenTtlMs?: number;
  /** How long a connection may take to present its token (default 5 s). */
  authTimeoutMs?: number;
}

/** Who a token was issued for: called with the authenticated connection. */
export type Claimant = (socket: Socket) => void;

export class StepListener {
  private server: Server | undefined;
  private readonly tokens: TokenBook<Claimant>;
  private readonly authTimeoutMs: number;
  /** Connections refused at authentication (for tests and diagnostics). */
  refused = 0;

  constructor(o: StepListenerOptions = {}) {
    this.tokens = new TokenBook(o.tokenTtlMs ?? 60_000); // as long as the runner waits for a child to connect
    this.authTimeoutMs = o.authTimeoutMs ?? 5_000;
  }

  get port(): number {
    const a = this.server?.address();
    if (!a || typeof a === 'string') throw new Error('the step listener is not listening');
    return a.port;
  }

  async listen(): Promise<number> {
    if (this.server) return this.port;
    const server = createServer({ noDelay: true }, (s) => this.authenticate(s));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0 }, () => (server.off('error', reject), resolve()));
    });
    // The engine's other handles decide when the process may exit, not this listener.
    server.unref();
    this.server = server;
    return this.port;
  }

  /** A token that hands its one connection to `claimant`. */
  issue(claimant: Claimant, onExpire?: () => void): string {
    return this.tokens.issue(claimant, onExpire);
  }

  revoke(claimant: Claimant): void {
    this.tokens.revoke(claimant);
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  private authenticate(socket: Socket): void {
    const refuse = () => {
      this.refused++;
      socket.destroy();
    };
    const timer = setTimeout(refuse, this.authTimeoutMs);
    timer.unref();
    socket.on('error', () => {}); // a reset by the peer: the socket just closes
    const done = () => {
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('end', onEnd);
    };
    const onEnd = () => (done(), refuse());
    const onReadable = () => {
      // Exactly the token line: bytes after it stay buffered and are read only once it passed.
      const head = socket.read(TOKEN_LINE_BYTES) as Buffer | null;
      if (head === null) return;
      done();
      const text = head.toString('latin1');
      const claimant = text.endsWith('\n') ? this.tokens.claim(text.slice(0, -1)) : undefined;
      if (!claimant) return refuse();
      claimant(socket);
    };
    socket.on('readable', onReadable);
    socket.once('end', onEnd);
  }
}
