// The SDK endpoint: an HTTP/2 server (on 127.0.0.1 unless `restate.endpoint` says otherwise)
// serving every workflow. The SDK matches its routes as path suffixes, so the same handler
// answers under any `/v/<tag>/` prefix (or the configured URL's path): each code version is
// registered as its own deployment URI, and runs pinned to an older deployment keep being
// served (by the code this process has).
//
// The SDK's log lines go to the engine's logger (sdk-log.ts), one line each. Closing the
// endpoint breaks the streams of invocations in flight (sleeping runs hold theirs for up
// to the inactivity timeout): what the SDK then says about them is expected, and goes out
// at debug level only.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import http2 from 'node:http2';
import type { Logger } from '../../ports/logger.ts';
import { sdkLogTransport } from './sdk-log.ts';

type Service = Parameters<typeof restate.createEndpointHandler>[0]['services'][number];

export class SdkEndpoint {
  private server: http2.Http2Server | undefined;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly sockets = new Set<import('node:net').Socket>();
  private closing = false;
  port = 0;

  /** identityKeys: only requests signed by these Restate keys are served (none = any caller). */
  constructor(
    private readonly services: Service[],
    private readonly identityKeys: string[] = [],
    private readonly logger?: Logger,
  ) {}

  /** fallback: a busy preferredPort (remembered, not configured) is replaced by a free one. */
  async listen(preferredPort: number, host = '127.0.0.1', fallback = true): Promise<number> {
    const handler = restate.createEndpointHandler({
      services: this.services,
      ...(this.identityKeys.length ? { identityKeys: this.identityKeys } : {}),
      ...(this.logger ? { logger: sdkLogTransport(this.logger, () => this.closing) } : {}),
    });
    const server = http2.createServer(handler);
    server.on('connection', (socket: import('node:net').Socket) => {
      if (this.closing) return void socket.destroy();
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('session', (s) => {
      // restate-server reconnects at once; while closing, such sessions are dropped so close() ends.
      if (this.closing) return void s.destroy();
      this.sessions.add(s);
      s.once('close', () => this.sessions.delete(s));
    });
    this.server = server;
    this.port = await new Promise<number>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        if (fallback && preferredPort !== 0 && err.code === 'EADDRINUSE') {
          server.listen(0, host);
          return;
        }
        reject(err);
      };
      server.on('error', onError);
      server.listen(preferredPort, host, () => {
        server.off('error', onError);
        const addr = server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : 0);
      });
    });
    return this.port;
  }

  /** Stops serving; invocations in flight see a broken stream and Restate retries them later. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.closing = true;
    for (const s of this.sessions) s.destroy();
    for (const socket of this.sockets) socket.destroy();
    // Bounded: a peer that never lets go must not hold engine.stop() hostage.
    await new Promise<void>((r) => {
      const timer = setTimeout(r, 2000);
      server.close(() => {
        clearTimeout(timer);
        r();
      });
    });
  }
}
