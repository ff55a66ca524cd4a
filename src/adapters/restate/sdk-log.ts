// The Restate SDK's log lines, through the engine's logger. The SDK logs each message with
// Error objects attached (their stacks run to dozens of lines) and logs routine events
// ("Invocation suspended") at info: here each becomes one line, the SDK's trace/debug/info
// go to debug, and errors from a broken stream (the endpoint closing, restate-server
// restarting: Restate retries the invocation, nothing is lost), a handler's deliberate
// TerminalError (a refused signal) and a requested cancel go to debug as well.
// Stacks are kept at debug level only.
import './polyfill.ts';
import * as restate from '@restatedev/restate-sdk';
import type { Logger, MessageLevel } from '../../ports/logger.ts';

const STREAM_CLOSED = /ERR_STREAM_PREMATURE_CLOSE|ERR_STREAM_WRITE_AFTER_END|ERR_STREAM_DESTROYED|ERR_HTTP2_INVALID_STREAM|ERR_HTTP2_STREAM_CANCEL|Premature close|write after end|socket hang up|ECONNRESET/;

function text(part: unknown, stacks: boolean): string {
  if (part instanceof Error) {
    const code = (part as { code?: unknown }).code;
    const head = `${part.name}${code !== undefined ? ` [${String(code)}]` : ''}: ${part.message}`;
    return stacks && part.stack ? `${head}\n${part.stack.split('\n').slice(1).join('\n')}` : head;
  }
  if (typeof part === 'string') return part;
  try {
    return JSON.stringify(part) ?? String(part);
  } catch {
    return String(part);
  }
}

/** `closing()`: whether the endpoint is being closed by engine.stop(). */
export function sdkLogTransport(logger: Logger, closing: () => boolean): restate.LoggerTransport {
  return (meta, message, ...rest) => {
    if (meta.replaying) return;
    const parts = [message, ...rest].filter((p) => p !== undefined);
    let level: MessageLevel = meta.level === 'error' ? 'error' : meta.level === 'warn' ? 'warn' : 'debug';
    if (level !== 'debug') {
      const summary = parts.map((p) => text(p, false)).join(' ');
      // A TerminalError a handler throws is its answer (a refused signal or retry), not a
      // fault; a CancelledError (a TerminalError too) is a cancel someone asked for.
      const answered = parts.some((p) => p instanceof restate.TerminalError);
      if (answered || closing() || STREAM_CLOSED.test(summary)) level = 'debug';
    }
    if (!logger.enabled(level)) return;
    const stacks = logger.level === 'debug';
    // The SDK puts stacks into its own strings too ("... " + error.stack): one line unless debug.
    let line = parts.map((p) => text(p, stacks)).join(' ').trim();
    if (!stacks) line = line.split('\n').filter((l) => !/^\s+at /.test(l)).join(' ').replace(/\s+/g, ' ');
    const where = meta.context ? ` ${meta.context.invocationTarget} ${meta.context.invocationId}` : '';
    logger.log(level, `restate sdk${where}: ${line}`);
  };
}
