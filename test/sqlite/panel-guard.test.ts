// The Runs panel's guards without a browser (src/adapters/http/panel.ts), on a real SQLite
// engine: actions need the page's token AND the panel's own origin; a foreign Host is refused
// when allowedHosts is set; a run's values are escaped in the HTML. The browser flow is
// test/e2e/panel.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manual, workflow } from '@tranquil/sdk';
import { createEngine, createPanel, type Engine } from '@tranquil/engine';

const wf = workflow('waits', (w) => {
  w.trigger(manual());
  w.run(async ({ step }) => step.waitForEvent('go'));
});
// Workflow code is not trusted to write HTML: its stream chunks and published values are text.
const HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">';
const talks = workflow('talks', (w) => {
  w.trigger(manual());
  w.run(async ({ step, ctx }) => {
    await step.do('a', () => 1);
    await ctx.publish('note', { html: HOSTILE });
    await ctx.stream('out').write(HOSTILE);
    return 'done';
  });
});

describe('Runs panel guards', () => {
  let engine: Engine | undefined;
  let dir = '';
  afterEach(async () => {
    await engine?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses actions without the token or from another origin, and escapes run values', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tranquil-panel-guard-'));
    engine = await createEngine({ dataDir: dir, workflows: [wf, talks] });
    await engine.start();
    const { runId } = await engine.trigger('waits', { note: '<script>alert(1)</script>' });
    for (let i = 0; i < 200 && (await engine.runs.get(runId)).status !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 10));
    const panel = await createPanel(engine, { allowedHosts: ['127.0.0.1:9'] });
    const own = 'http://127.0.0.1:9';
    const post = (headers: Record<string, string>, body: string) =>
      panel.app.request(`${own}/runs/${runId}/cancel`, { method: 'POST', headers: { host: '127.0.0.1:9', 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

    const page = await panel.app.request(`${own}/runs/${runId}`, { headers: { host: '127.0.0.1:9' } });
    const html = await page.text();
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain(`name="_token" value="${panel.token}"`);
    // One signal form on a live run's page (it was drawn twice: in the fixed part and again
    // among the refreshed actions).
    expect(html.match(/action="\/runs\/[^"]+\/signal"/g)).toHaveLength(1);
    expect(html.match(/id="signal"/g)).toHaveLength(1);

    expect((await panel.app.request(`${own}/`, { headers: { host: 'evil.example:9' } })).status).toBe(403);
    const created = (await engine.runs.get(runId)).createdAt;
    expect(await (await panel.app.request(`${own}/?since=${created}`, { headers: { host: '127.0.0.1:9' } })).text()).toContain(`>${runId}</a>`);
    expect(await (await panel.app.request(`${own}/?until=2000-01-01T00:00:00Z`, { headers: { host: '127.0.0.1:9' } })).text()).not.toContain(`>${runId}</a>`);
    const badTime = await panel.app.request(`${own}/?since=yesterday`, { headers: { host: '127.0.0.1:9' } });
    expect(badTime.status).toBe(400);
    expect(await badTime.text()).toMatch(/since.*ISO 8601 instant/);
    const foreign = await post({ origin: 'http://evil.example' }, `_token=${panel.token}`);
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toBe('refused: cross-origin request');
    expect((await post({ 'sec-fetch-site': 'cross-site' }, `_token=${panel.token}`)).status).toBe(403);
    const noToken = await post({ origin: own }, '_token=guess');
    expect(noToken.status).toBe(403);
    expect(await noToken.text()).toBe('refused: bad or missing panel token');
    expect((await engine.runs.get(runId)).status).toBe('waiting');

    const bad = await panel.app.request(`${own}/runs/${runId}/signal`, {
      method: 'POST', headers: { host: '127.0.0.1:9', origin: own, 'content-type': 'application/x-www-form-urlencoded' }, body: `_token=${panel.token}&name=go&data=%7Bnope`,
    });
    expect(bad.status).toBe(303);
    expect(decodeURIComponent(bad.headers.get('location')!)).toMatch(/payload is not valid JSON .*; nothing sent/);
    expect((await engine.runs.get(runId)).status).toBe('waiting');

    const ok = await post({ origin: own }, `_token=${panel.token}`);
    expect(ok.status).toBe(303);
    expect((await engine.result(runId, { timeout: '10s' })).status).toBe('cancelled');
    // The panel's cancel is recorded as the panel's, and `why` says so.
    expect((await engine.runs.get(runId)).cancel?.by).toBe('panel');
    expect((await engine.runs.explain(runId)).summary).toMatch(/ was cancelled by panel at /);
    const after = await (await panel.app.request(`${own}/runs/${runId}`, { headers: { host: '127.0.0.1:9' } })).text();
    expect(after).toMatch(/<td id="cancelled-by">panel at \d{4}-\d\d-\d\dT[\d:.]+Z<\/td>/);
    expect(after).toContain(' was cancelled by panel at ');
  });

  it('run control: pause, resume and rerun are guarded like the other actions; a refusal is the engine\'s line; streams and state are escaped', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tranquil-panel-guard-'));
    engine = await createEngine({ dataDir: dir, workflows: [wf, talks] });
    await engine.start();
    const { runId } = await engine.trigger('talks', null);
    expect((await engine.result(runId, { timeout: '10s' })).status).toBe('succeeded');
    const panel = await createPanel(engine, { allowedHosts: ['127.0.0.1:9'] });
    const own = 'http://127.0.0.1:9';
    const post = (verb: string, headers: Record<string, string>, body = `_token=${panel.token}`) =>
      panel.app.request(`${own}/runs/${runId}/${verb}`, { method: 'POST', headers: { host: '127.0.0.1:9', 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

    const html = await (await panel.app.request(`${own}/runs/${runId}`, { headers: { host: '127.0.0.1:9' } })).text();
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('<pre class="stream-text">&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(2)&quot;&gt;</pre>');
    expect(html).toContain('&quot;html&quot;: &quot;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('<span class="chunks">1 chunk</span>');
    // A finished run offers Rerun, not Pause or Resume.
    expect(html).toContain('id="rerun"');
    expect(html).not.toContain('id="pause"');
    expect(html).not.toContain('id="resume"');

    for (const verb of ['pause', 'resume', 'rerun']) {
      expect((await post(verb, { origin: 'http://evil.example' })).status).toBe(403);
      expect((await post(verb, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
      expect(await (await post(verb, { origin: own }, '_token=guess')).text()).toBe('refused: bad or missing panel token');
    }
    expect((await engine.runs.get(runId)).reruns ?? []).toEqual([]);

    // Pausing a finished run: the engine's refusal, one line, back on the run page.
    const refused = await post('pause', { origin: own });
    expect(refused.status).toBe(303);
    const flash = new URL(refused.headers.get('location')!, own).searchParams.get('flash');
    expect(flash).toBe(`RunStateError: run ${runId} already finished (succeeded); nothing to pause`);
    const resumeRefused = new URL((await post('resume', { origin: own })).headers.get('location')!, own).searchParams.get('flash');
    expect(resumeRefused).toBe(`RunStateError: run ${runId} is succeeded; only a paused or a cancelled run can be resumed`);

    const rerun = await post('rerun', { origin: own });
    expect(rerun.status).toBe(303);
    const to = new URL(rerun.headers.get('location')!, own);
    const [newId] = (await engine.runs.get(runId)).reruns ?? [];
    expect(newId).toBeDefined();
    expect(to.pathname).toBe(`/runs/${encodeURIComponent(newId!)}`);
    expect(to.searchParams.get('flash')).toBe(`rerun of ${runId} started`);
    expect((await engine.runs.get(newId!)).rerunOf).toBe(runId);
    const newPage = await (await panel.app.request(`${own}/runs/${encodeURIComponent(newId!)}`, { headers: { host: '127.0.0.1:9' } })).text();
    expect(newPage).toContain(`<td id="rerun-of"><a href="${encodeURIComponent(runId)}">${runId}</a></td>`);
  });

  it('push: a run page\'s step events as server-sent events, in order, then `run` when it ended; same Host guard; unknown run 404', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tranquil-panel-guard-'));
    engine = await createEngine({ dataDir: dir, workflows: [wf, talks] });
    await engine.start();
    const { runId } = await engine.trigger('waits', null);
    for (let i = 0; i < 200 && (await engine.runs.get(runId)).status !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 10));
    const panel = await createPanel(engine, { allowedHosts: ['127.0.0.1:9'] });
    const own = 'http://127.0.0.1:9';
    const get = (path: string, host = '127.0.0.1:9') => panel.app.request(`${own}${path}`, { headers: { host } });
    expect((await get(`/runs/${runId}/live`, 'evil.example:9')).status).toBe(403);
    expect((await get('/live', 'evil.example:9')).status).toBe(403);
    expect((await get('/runs/nope/live')).status).toBe(404);
    const badPoll = await createPanel(engine, { pollMs: -1 }).catch((e: Error) => e);
    expect(badPoll).toBeInstanceOf(Error);
    expect((badPoll as Error).message).toMatch(/^panel pollMs: .*>=0/);
    expect((badPoll as Error).message).not.toContain('\n');
    const html = await (await get(`/runs/${runId}`)).text();
    expect(html).toContain(`data-live="/runs/${runId}/live"`);
    expect(html).toContain('<ol id="step-events"');

    type Seen = { event: string; data: { type?: string; line?: string; count?: number } };
    /** An SSE response's events, read as they come until `event` is among them. */
    const sse = (res: Response) => {
      const reader = res.body!.getReader();
      const seen: Seen[] = [];
      let buf = '';
      const until = async (event: string) => {
        while (!seen.some((e) => e.event === event)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended before '${event}'`);
          buf += new TextDecoder().decode(value);
          for (let k = buf.indexOf('\n\n'); k >= 0; k = buf.indexOf('\n\n')) {
            const block = buf.slice(0, k);
            buf = buf.slice(k + 2);
            const ev = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (ev && data) seen.push({ event: ev, data: JSON.parse(data) });
          }
        }
      };
      return { seen, until, close: () => reader.cancel() };
    };
    const res = await get(`/runs/${runId}/live`);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const one = sse(res);
    const list = sse(await get('/live'));
    await one.until('hello');
    await list.until('hello');
    await engine.signal(runId, 'go', { ok: 1 });
    await one.until('run');
    // The list's stream tells that steps happened (it refreshes), not each event.
    await list.until('steps');
    expect(list.seen.find((e) => e.event === 'steps')!.data.count).toBeGreaterThanOrEqual(1);
    expect(list.seen.some((e) => e.event === 'step')).toBe(false);
    await one.close();
    await list.close();
    const seen = one.seen;
    expect((await engine.runs.get(runId)).status).toBe('succeeded');
    const steps = seen.filter((e) => e.event === 'step');
    expect(steps.map((e) => e.data.type)).toEqual(['step.signaled']);
    expect(steps[0]!.data.line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} step\.signaled '/);
    expect(seen.at(-1)!.event).toBe('run');
  });
});
