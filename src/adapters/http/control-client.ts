// The client side of the serve control channel (control-protocol.ts): finds the running
// `tranquil serve` of a data dir from its serve.json and sends it one request at a time.
// Used by the CLI's mutating commands and by the embedding app's attach() (compose/attach.ts).
// A serve.json is trusted only if it is a regular file owned by this user and readable by
// nobody else (mode 0600, as serve writes it), names a loopback address, and its pid is
// alive: a file planted by someone else could otherwise send this user's requests (and the
// token) to a port of their choosing.
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BackendUnavailableError, fromErrorInfo } from '../../domain/errors.ts';
import { describeIssue } from '../../domain/validate.ts';
import { pidAlive } from '../../platform/pid.ts';
import { answerSchema, SERVE_FILE, serveFileSchema, type Op, type ServeInfo } from './control-protocol.ts';

/** Why a data dir's serve.json cannot be used, or the info in it; undefined when there is none. */
export function readServeFile(dataDir: string): ServeInfo | { refused: string } | undefined {
  const file = join(dataDir, SERVE_FILE);
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return undefined;
  }
  if (!st.isFile()) return { refused: `${file} is not a regular file` };
  if (process.platform !== 'win32') {
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return { refused: `${file} belongs to another user (uid ${st.uid})` };
    if ((st.mode & 0o077) !== 0) return { refused: `${file} is readable or writable by others (mode ${(st.mode & 0o777).toString(8)}); serve writes it 0600` };
  }
  try {
    const parsed = serveFileSchema().safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : { refused: describeIssue(parsed.error.issues, file) };
  } catch (err) {
    return { refused: `${file}: ${(err as Error).message}` };
  }
}

/** The running serve for this data dir, if any (a file left by a dead serve, or one that
 *  fails the checks above, is ignored). */
export function findServe(dataDir: string): ServeInfo | undefined {
  const info = readServeFile(dataDir);
  return info && !('refused' in info) && pidAlive(info.pid) ? info : undefined;
}

/** Sends one request; the serve's error comes back as its own class (fromErrorInfo), as if
 *  thrown here. An unreachable serve or an answer that is not a valid frame is a
 *  BackendUnavailableError. */
export async function sendOp(info: ServeInfo, op: Op, signal?: AbortSignal): Promise<unknown> {
  let res: Response;
  let text: string;
  const host = info.host.includes(':') ? `[${info.host}]` : info.host;
  try {
    res = await fetch(`http://${host}:${info.port}/control`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${info.token}` },
      body: JSON.stringify(op),
      ...(signal ? { signal } : {}),
    });
    text = await res.text();
  } catch (err) {
    throw new BackendUnavailableError(`serve (pid ${info.pid}) owns the data dir but its control endpoint did not answer: ${(err as Error).message}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BackendUnavailableError(`serve (pid ${info.pid}) answered ${res.status} with something that is not JSON`);
  }
  const answer = answerSchema().safeParse(body);
  if (!answer.success) throw new BackendUnavailableError(`serve (pid ${info.pid}) answered ${res.status} with ${describeIssue(answer.error.issues, 'an invalid frame')}`);
  if ('error' in answer.data) throw fromErrorInfo(answer.data.error as Parameters<typeof fromErrorInfo>[0]);
  return answer.data.result;
}

/** A result checked against its schema; a mismatch is the serve's fault, named in one line. */
export function checked<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } } }, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new BackendUnavailableError(describeIssue(r.error.issues, `serve's answer to ${what}`));
  return r.data;
}
