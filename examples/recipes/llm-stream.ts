// Recipe: stream an LLM's answer to the browser while the model produces it. The model call
// is one step whose body writes each token to the run's stream `tokens` (info.stream), so
// the tokens reach readers at once and are stored with the step's result: a crash or a
// deploy after the step never pays for the call again, and a reader that comes later (a
// reload, another tab) reads the same tokens from offset 0. If the call fails half-way and
// is retried, its tokens are discarded and the HTTP stream says `rewind` before the retry's
// tokens (docs/live-output.md, "From a step body"). The app is plain node:http: POST /chat
// starts a run and answers with server-sent events: `run`, then `token`s (and a `rewind` if
// an attempt failed), then `done` with the run's output.
// Test: test/recipes/llm-stream.test.ts.
import { createServer, type Server } from 'node:http';
import * as z from 'zod';
import { manual, workflow } from '@tranquil/sdk';
import type { Engine } from '@tranquil/engine';

export interface Model {
  /** The answer to `prompt`, token by token, as the model produces it. */
  tokens(prompt: string, signal: AbortSignal): AsyncIterable<string>;
}

/** A stand-in for a real model: the answer's words one at a time, `delayMs` apart. With
 *  `failAfter`, its first call breaks off after that many tokens (a dropped connection). */
export function fakeModel(answer: string, options: { delayMs?: number; failAfter?: number } = {}): Model & { calls: number } {
  const words = answer.split(/(?<= )/);
  const model = {
    calls: 0,
    async *tokens(_prompt: string, signal: AbortSignal): AsyncIterable<string> {
      const call = ++model.calls;
      for (const [i, w] of words.entries()) {
        await new Promise((r) => setTimeout(r, options.delayMs ?? 20));
        signal.throwIfAborted();
        if (call === 1 && i === options.failAfter) throw new Error('the model dropped the connection');
        yield w;
      }
    },
  };
  return model;
}

export function chatWorkflow(model: Model, retryDelay: number | string = '1s') {
  return workflow<{ prompt: string }, { text: string }>('chat', (w) => {
    w.trigger(manual());
    w.run(async ({ input, step, ctx }) => {
      const text = await step.do('generate', { retries: { limit: 3, delay: retryDelay }, timeout: '2m' }, async ({ stream, signal }) => {
        const out = stream('tokens');
        let text = '';
        for await (const token of model.tokens(input.prompt, signal)) {
          out.write(token); // readers get it now; it is stored with the step's result
          text += token;
        }
        return text;
      });
      await ctx.stream('tokens').close(); // readers end here
      return { text };
    });
  });
}

const ChatRequest = z.object({ prompt: z.string().min(1).max(10_000) });

/** POST /chat {"prompt": "..."}: a run of `chat`, its tokens as server-sent events. */
export function createChatServer(engine: Engine): Server {
  return createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/chat') return void res.writeHead(404).end();
      let body = '';
      for await (const c of req) body += String(c);
      let prompt: string;
      try {
        prompt = ChatRequest.parse(JSON.parse(body)).prompt;
      } catch {
        return void res.writeHead(400, { 'content-type': 'text/plain' }).end('expected {"prompt": "<text>"}\n');
      }
      const { runId } = await engine.trigger('chat', { prompt });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send('run', { runId });
      // provisional: a body's tokens as it writes them; a failed attempt's come back as a rewind.
      for await (const item of engine.runs.stream<string>(runId, 'tokens', { provisional: true })) {
        if (res.destroyed) break; // the client went away; the run goes on, its tokens stay readable
        if ('rewind' in item) send('rewind', { offset: item.rewind });
        else send('token', { offset: item.offset, token: item.chunk });
      }
      const run = await engine.result(runId, { timeout: '5m' });
      send('done', { status: run.status, output: run.output ?? null });
      res.end();
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`${(err as Error).message}\n`);
    });
  });
}
