// The LLM streaming recipe (examples/recipes/llm-stream.ts) for real: an engine on its SQLite
// data dir, the recipe's node:http server on 127.0.0.1, and a client reading the server-sent
// events of POST /chat as they come. The tokens arrive in order, the first while the run is
// still running; a model call that breaks off after 3 tokens and is retried shows a rewind,
// and what the client keeps (applying the rewind) is the answer, once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '@tranquil/engine';
import { chatWorkflow, createChatServer, fakeModel } from '../../examples/recipes/llm-stream.ts';

type Sse = { event: string; data: Record<string, unknown>; runStatus?: string };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(model: ReturnType<typeof fakeModel>): Promise<{ engine: Engine; url: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tq-llm-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const engine = await createEngine({ dataDir, workflows: [chatWorkflow(model, 100)] });
  await engine.start();
  cleanups.push(() => engine.stop());
  const server = createChatServer(engine);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { engine, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** POSTs the prompt and reads the events as they arrive; at each token's arrival it asks
 *  the engine for the run's status (so a test can tell the token came before the run ended). */
async function chat(engine: Engine, url: string, prompt: string): Promise<Sse[]> {
  const res = await fetch(`${url}/chat`, { method: 'POST', body: JSON.stringify({ prompt }), headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const events: Sse[] = [];
  let runId = '';
  let buf = '';
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)![1]!;
      const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown>;
      const e: Sse = { event, data };
      if (event === 'run') runId = String(data.runId);
      if (event === 'token') e.runStatus = (await engine.runs.get(runId)).status;
      events.push(e);
    }
  }
  return events;
}

/** What a client shows: tokens appended, a rewind drops everything from its offset on. */
function shown(events: Sse[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (e.event === 'rewind') out.length = Number(e.data.offset);
    if (e.event === 'token') out[Number(e.data.offset)] = String(e.data.token);
  }
  return out;
}

describe('recipe: an LLM answer streamed as server-sent events', () => {
  const answer = 'Durable runs keep every token they stream, once.';
  const words = answer.split(/(?<= )/);

  it('tokens arrive in order while the run is still running, then done with the output', async () => {
    const model = fakeModel(answer, { delayMs: 30 });
    const { engine, url } = await serve(model);
    const events = await chat(engine, url, 'why durable?');
    expect(events[0]!.event).toBe('run');
    const tokens = events.filter((e) => e.event === 'token');
    expect(tokens.map((e) => e.data.token)).toEqual(words);
    expect(tokens.map((e) => e.data.offset)).toEqual(words.map((_, i) => i));
    // The first token came while the run was running (the model had words left to say).
    expect(tokens[0]!.runStatus).toBe('running');
    expect(events.at(-1)).toEqual({ event: 'done', data: { status: 'succeeded', output: { text: answer } } });
    expect(model.calls).toBe(1);
    // The stream is stored: a reader after the end gets the same tokens from offset 0.
    const runId = String(events[0]!.data.runId);
    const again: string[] = [];
    for await (const t of engine.runs.stream<string>(runId, 'tokens')) again.push(t);
    expect(again).toEqual(words);
  }, 60_000);

  it('a model call that breaks off after 3 tokens is retried: the client gets a rewind and keeps the answer once', async () => {
    const model = fakeModel(answer, { delayMs: 20, failAfter: 3 });
    const { engine, url } = await serve(model);
    const events = await chat(engine, url, 'why durable?');
    const seq = events.filter((e) => e.event !== 'run').map((e) => (e.event === 'token' ? String(e.data.token) : e.event === 'rewind' ? `<rewind ${String(e.data.offset)}>` : e.event));
    expect(seq).toEqual([...words.slice(0, 3), '<rewind 0>', ...words, 'done']);
    expect(shown(events)).toEqual(words);
    expect(model.calls).toBe(2);
    const runId = String(events[0]!.data.runId);
    const stored: string[] = [];
    for await (const t of engine.runs.stream<string>(runId, 'tokens')) stored.push(t);
    expect(stored).toEqual(words);
  }, 60_000);

  it('a request without a prompt is a 400 and starts no run', async () => {
    const { engine, url } = await serve(fakeModel(answer));
    const res = await fetch(`${url}/chat`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe('expected {"prompt": "<text>"}\n');
    expect(await engine.runs.list({ workflow: 'chat' })).toEqual([]);
  });
});
