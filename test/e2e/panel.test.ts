// The Runs panel in real Chromium (Debian's chromium, found on PATH, through playwright-core), on
// both backends: open the list, filter to failed runs, open one, read the verdict, click
// retry and see the run succeed without a reload (the live refresh swaps the page's live
// part). Then a forged cross-origin POST from a page on another origin is refused and changes
// nothing, and a POST without the panel's token is refused too. The run page's screenshot is
// kept as docs/panel-run.png (written when PANEL_SCREENSHOT=1, so a normal run changes no
// tracked file). Under `tranquil dev` (its `holds`), every page names the held runs with the
// step where the reloaded code diverges, the list marks them, and the decision is a click.
// Run control: a run streaming between steps is paused, seen stopped, resumed, seen growing
// on the same page to its end (its hostile last chunk shown as text), and rerun. Those pages
// have no fallback poll (pollMs 0): all they show after loading comes from the step events
// the panel pushes (server-sent events), which the run page also lists as they arrive. The
// workflow's Pause / Resume buttons hold a run triggered while paused and start it on resume.
// The list's queue rows show a queue whose limit binds (running = limit, the depth per key)
// and follow the line as it moves, with no reload (docs/panel-queues.png, as above).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext } from 'playwright-core';
import { manual, queue, TerminalError, workflow } from '@tranquil/sdk';
import { createEngine, servePanel, type Engine, type HeldRun } from '@tranquil/engine';
import { needs } from '../needs.ts';

const need = needs('chromium');
const CHROMIUM = need.programs.chromium;
const ROOT = resolve(import.meta.dirname, '../..');

let browser: BrowserContext | undefined;
const profile = mkdtempSync(join(tmpdir(), 'tranquil-chromium-'));

beforeAll(async () => {
  if (!CHROMIUM) return;
  // A fresh profile dir (playwright passes it as --user-data-dir).
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  rmSync(profile, { recursive: true, force: true });
});

describe.skipIf(!CHROMIUM)(`Runs panel in Chromium${need.skipReason ? ` [skipped: ${need.skipReason}]` : ''}`, need.options, () => {
  for (const backend of ['sqlite', 'restate'] as const) {
    it(`${backend}: list, filter to failed, open, read why, retry, see it succeed live; a forged cross-origin POST changes nothing`, async () => {
      const gate = { fixed: false };
      const wfs = [
        workflow('checkout', (w) => {
          w.trigger(manual());
          w.run(async ({ step, input }) => {
            await step.do('reserve', () => `hold-${input.order}`);
            await step.do('charge', () => {
              if (!gate.fixed) throw new TerminalError('card declined');
              return 'charged';
            });
            await step.sleep('settle', 1500);
            return { order: input.order, charged: true };
          });
        }),
        workflow('greet', (w) => {
          w.trigger(manual());
          w.run(async ({ step }) => step.waitForEvent('go', { timeout: '1h' }));
        }),
      ];
      const dir = mkdtempSync(join(tmpdir(), `tranquil-panel-${backend}-`));
      let engine: Engine | undefined;
      let panel: Awaited<ReturnType<typeof servePanel>> | undefined;
      let evil: Server | undefined;
      const ctx = browser!;
      const pages: { close(): Promise<void> }[] = [];
      try {
        engine = await createEngine({ backend, dataDir: dir, workflows: wfs });
        await engine.start();
        const failed = (await engine.trigger('checkout', { order: 'A-17' })).runId;
        const waiting = (await engine.trigger('greet', null)).runId;
        expect((await engine.result(failed, { timeout: '20s' })).status).toBe('failed');
        for (let i = 0; i < 200 && (await engine.runs.get(waiting)).status !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 25));
        panel = await servePanel(engine);

        const pageA = await ctx.newPage();
        pageA.setDefaultTimeout(15_000);
        pages.push(pageA);
        await pageA.goto(panel.url);
        await pageA.getByRole('link', { name: waiting }).waitFor();
        await pageA.selectOption('select[name=status]', 'failed');
        await pageA.click('button[type=submit]');
        await pageA.waitForURL(/status=failed/);
        expect(await pageA.getByRole('link', { name: waiting }).count()).toBe(0);
        await pageA.getByRole('link', { name: failed }).click();
        await pageA.waitForURL(/\/runs\//);
        const why = await pageA.locator('#why').innerText();
        expect(why).toContain(`Run ${failed} of workflow 'checkout'`);
        expect(why).toContain("failed: step 'charge' failed on attempt 1 with TerminalError: card declined");
        expect(why).toContain(`Next: Fix the cause, then resume it: tranquil runs retry ${failed}`);
        expect(await pageA.locator('.timeline .bar').count()).toBe(2);
        if (backend === 'sqlite' && process.env.PANEL_SCREENSHOT === '1') await pageA.screenshot({ path: join(ROOT, 'docs/panel-run.png'), fullPage: true });

        gate.fixed = true;
        await pageA.click('#retry');
        await pageA.waitForURL(/flash=retried/);
        // From here on no navigation: the marker survives only if the page is never reloaded.
        await pageA.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 1));
        await pageA.locator('#run-status', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
        expect(await pageA.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(1);
        expect(await pageA.locator('#output').innerText()).toContain('"charged": true');
        expect(await pageA.locator('#why').innerText()).toMatch(/succeeded after 3 completed steps/);

        // A page on another origin posts a form to the panel's cancel action (a guessed token).
        const target = `${panel.url}runs/${encodeURIComponent(waiting)}/cancel`;
        evil = createServer((_, res) => {
          res.setHeader('content-type', 'text/html');
          res.end(`<form id="f" method="post" action="${target}"><input name="_token" value="guessed"></form><script>document.getElementById('f').submit()</script>`);
        });
        await new Promise<void>((r) => evil!.listen(0, '127.0.0.1', () => r()));
        const evilUrl = `http://localhost:${(evil.address() as { port: number }).port}/`;
        const pageB = await ctx.newPage();
        pageB.setDefaultTimeout(15_000);
        pages.push(pageB);
        const refused = pageB.waitForResponse((r) => r.url() === target);
        await pageB.goto(evilUrl);
        expect((await refused).status()).toBe(403);
        expect(await pageB.locator('body').innerText()).toContain('refused: cross-origin request');
        // Same origin but without the page's token: refused as well.
        const noToken = await fetch(target, { method: 'POST', headers: { origin: new URL(panel.url).origin, 'content-type': 'application/x-www-form-urlencoded' }, body: '_token=nope' });
        expect(noToken.status).toBe(403);
        await new Promise((r) => setTimeout(r, 300));
        const still = await engine.runs.get(waiting);
        expect(still.status).toBe('waiting');
        expect(still.steps.every((s) => s.status !== 'failed')).toBe(true);
      } finally {
        for (const p of pages) await p.close();
        await new Promise((r) => (evil ? (evil.close(() => r(undefined)), evil.closeAllConnections()) : r(undefined)));
        await panel?.close();
        await engine?.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 90_000);
  }

  for (const backend of ['sqlite', 'restate'] as const) {
    it(`${backend}: pause, see it stop; resume, see the stream grow live and the run finish; hostile chunks are text; rerun links a new run`, async () => {
      // Each tick is a step boundary; the step's result says whether to go on (journaled, so a
      // replay after the resume decides as the first execution did).
      const gate = { finish: false };
      const HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">';
      const talker = workflow('talker', (w) => {
        w.trigger(manual());
        w.run(async ({ step, ctx }) => {
          const out = ctx.stream('log');
          for (let i = 0; i < 400; i++) {
            const more = await step.do(`tick ${i}`, async () => (await new Promise((r) => setTimeout(r, 250)), !gate.finish));
            await out.write(`line ${i}\n`);
            await ctx.publish('progress', { done: i + 1 });
            if (!more) break;
          }
          await out.write(HOSTILE);
          await out.close();
          return 'talked';
        });
      });
      const dir = mkdtempSync(join(tmpdir(), `tranquil-panel-ctl-${backend}-`));
      let engine: Engine | undefined;
      let panel: Awaited<ReturnType<typeof servePanel>> | undefined;
      const page = await browser!.newPage();
      page.setDefaultTimeout(20_000);
      type Marked = { marker?: number; pwned?: number };
      const mark = () => page.evaluate(() => ((globalThis as unknown as Marked).marker = 1));
      const marked = () => page.evaluate(() => (globalThis as unknown as Marked).marker);
      const chunks = async () => Number((await page.locator('.stream[data-stream="log"] .chunks').innerText()).split(' ')[0]);
      const grows = async (from: number) => {
        for (let i = 0; i < 200 && (await chunks()) <= from; i++) await new Promise((r) => setTimeout(r, 100));
        return chunks();
      };
      try {
        engine = await createEngine({ backend, dataDir: dir, workflows: [talker] });
        await engine.start();
        panel = await servePanel(engine, { pollMs: 0 });
        // The list shows a run started after it loaded: its first step's event refreshes it.
        await page.goto(panel.url);
        await mark();
        const runId = (await engine.trigger('talker', null)).runId;
        await page.getByRole('link', { name: runId }).waitFor();
        expect(await marked()).toBe(1);
        await page.getByRole('link', { name: runId }).click();
        await page.waitForURL(/\/runs\//);
        await page.locator('.stream[data-stream="log"]').waitFor();

        // The stream grows on the page with no navigation (the marker would be gone after one).
        await mark();
        const first = await chunks();
        expect(await grows(first)).toBeGreaterThan(first);
        expect(await page.locator('#state [data-key="progress"] .state-value').innerText()).toMatch(/"done": \d+/);
        expect(await marked()).toBe(1);
        // The step events, listed as they arrive, in order for each step.
        const events = page.locator('#step-events li');
        // The list starts when the page's push connects, mid-run: wait until it holds a started
        // tick and that tick's success, a chunk and a publish (a first chunk alone could come
        // before any started line: the test once read the list that early in a full npm test).
        const complete = (ls: string[]): boolean => {
          const at = ls.findIndex((l) => / step\.started 'tick /.test(l));
          const t = at < 0 ? undefined : / step\.started '(tick \d+)'/.exec(ls[at]!)?.[1];
          return t !== undefined && ls.findIndex((l) => l.includes(`step.succeeded '${t}'`)) > at &&
            ls.some((l) => l.includes(' stream.chunk ')) && ls.some((l) => l.includes(' state.published '));
        };
        await expect.poll(async () => complete(await events.allInnerTexts()), { timeout: 20_000 }).toBe(true);
        const lines = await events.allInnerTexts();
        expect(lines.some((l) => /step\.started 'tick \d+' attempt 1$/.test(l))).toBe(true);
        expect(lines.some((l) => /stream\.chunk 'stream:log(#\d+)?'( attempt \d+)? #\d+: "line \d+\\n"$/.test(l))).toBe(true);
        expect(lines.some((l) => /state\.published 'publish:progress(#\d+)?' key 'progress'$/.test(l))).toBe(true);
        const started = lines.findIndex((l) => / step\.started 'tick /.test(l));
        const tick = / step\.started '(tick \d+)'/.exec(lines[started]!)![1];
        expect(lines.findIndex((l) => l.includes(`step.succeeded '${tick}'`))).toBeGreaterThan(started);

        await page.click('#pause');
        await page.waitForURL(/flash=pause/);
        await page.locator('#run-status', { hasText: 'paused' }).waitFor();
        expect(await page.locator('#paused-by').innerText()).toMatch(/^panel at /);
        expect(await page.locator('#resume').count()).toBe(1);
        expect(await page.locator('#pause').count()).toBe(0);
        // Paused: nothing moves, on the page (several refreshes) or in the journal.
        await mark();
        const steps = (await engine.runs.get(runId)).steps.length;
        const held = await chunks();
        await new Promise((r) => setTimeout(r, 2500));
        expect((await engine.runs.get(runId)).status).toBe('paused');
        expect((await engine.runs.get(runId)).steps.length).toBe(steps);
        expect(await chunks()).toBe(held);
        expect(await marked()).toBe(1);
        const quiet = await events.count();
        await new Promise((r) => setTimeout(r, 500));
        expect(await events.count()).toBe(quiet);

        await page.click('#resume');
        await page.waitForURL(/flash=resumed/);
        await mark();
        expect(await grows(held)).toBeGreaterThan(held);
        await page.locator('#step-events li[data-type="stream.chunk"]').first().waitFor();
        gate.finish = true;
        await page.locator('#run-status', { hasText: 'succeeded' }).waitFor({ timeout: 30_000 });
        expect(await marked()).toBe(1);
        // The run's own text, shown as text: no script ran, no image element was made.
        const text = await page.locator('.stream[data-stream="log"] .stream-text').innerText();
        expect(text).toMatch(/^line 0\nline 1\n/);
        expect(text.endsWith(HOSTILE)).toBe(true);
        expect(await page.locator('.stream[data-stream="log"]').innerText()).toContain('closed');
        expect(await page.locator('#live-output img').count()).toBe(0);
        expect(await page.evaluate(() => (globalThis as unknown as Marked).pwned)).toBeUndefined();
        const done = await engine.runs.get(runId);
        expect(await chunks()).toBe(done.steps.filter((st) => st.kind === 'stream').length - 1);

        await page.click('#rerun');
        await page.waitForURL(/flash=rerun/);
        const [again] = (await engine.runs.get(runId)).reruns ?? [];
        expect(again).toBeDefined();
        expect(page.url()).toContain(`/runs/${encodeURIComponent(again!)}?`);
        expect(await page.locator('#rerun-of').innerText()).toBe(runId);
        expect((await engine.runs.get(again!)).rerunOf).toBe(runId);
        expect((await engine.result(again!, { timeout: '30s' })).status).toBe('succeeded');
        await page.locator('#rerun-of').getByRole('link', { name: runId }).click();
        await page.waitForURL(new RegExp(`/runs/${runId}$`));
        expect(await page.locator('#reruns').innerText()).toBe(again!);
      } finally {
        await page.close();
        await panel?.close();
        await engine?.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  }

  for (const backend of ['sqlite', 'restate'] as const) {
    it(`${backend}: Pause workflow holds a run triggered meanwhile; Resume workflow starts it, seen live; one signal form ends it`, async () => {
      // Two steps whose bodies wait for the test, so what the page shows next happens after it loaded.
      const open = { start: true, after: false };
      const until = async (k: keyof typeof open) => {
        while (!open[k]) await new Promise((r) => setTimeout(r, 50));
      };
      const job = workflow('job', (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => {
          await step.do('start', () => until('start'));
          const got = await step.waitForEvent<{ n: number }>('go', { timeout: '1h' });
          return step.do('after', async () => (await until('after'), { n: got.n + 1 }));
        });
      });
      const dir = mkdtempSync(join(tmpdir(), `tranquil-panel-wfpause-${backend}-`));
      let engine: Engine | undefined;
      let panel: Awaited<ReturnType<typeof servePanel>> | undefined;
      const page = await browser!.newPage();
      page.setDefaultTimeout(20_000);
      type Marked = { marker?: number };
      const mark = () => page.evaluate(() => ((globalThis as unknown as Marked).marker = 1));
      const marked = () => page.evaluate(() => (globalThis as unknown as Marked).marker);
      const statusOf = async (id: string) => (await engine!.runs.get(id)).status;
      try {
        engine = await createEngine({ backend, dataDir: dir, workflows: [job] });
        await engine.start();
        const first = (await engine.trigger('job', null)).runId;
        for (let i = 0; i < 400 && (await statusOf(first)) !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 25));
        panel = await servePanel(engine, { pollMs: 0 });
        await page.goto(`${panel.url}runs/${encodeURIComponent(first)}`);
        // A live run's page has one signal form (it once had two).
        expect(await page.locator('form[action$="/signal"]').count()).toBe(1);
        await page.click('#workflow-pause');
        await page.waitForURL(/flash=workflow/);
        expect(await page.locator('#flash').innerText()).toBe('workflow job paused by panel: its new runs are held until it is resumed');
        expect((await engine.workflows.list()).find((w) => w.name === 'job')?.paused?.by).toBe('panel');

        // Triggered while paused: created, held, none of its code run.
        const held = (await engine.trigger('job', null)).runId;
        for (let i = 0; i < 400 && (await statusOf(held)) !== 'paused'; i++) await new Promise((r) => setTimeout(r, 25));
        await new Promise((r) => setTimeout(r, 1000));
        const heldView = await engine.runs.get(held);
        expect(heldView.status).toBe('paused');
        expect(heldView.paused?.held).toBe(true);
        expect(heldView.steps).toEqual([]);
        expect(await statusOf(first)).toBe('waiting');

        open.start = false;
        await page.goto(`${panel.url}runs/${encodeURIComponent(held)}`);
        expect(await page.locator('#run-status').innerText()).toBe('paused');
        expect(await page.locator('#workflow-pause').count()).toBe(0);
        await page.click('#workflow-resume');
        await page.waitForURL(/flash=workflow/);
        expect(await page.locator('#flash').innerText()).toBe('workflow job resumed; 1 held run(s) resumed');
        expect((await engine.workflows.list()).find((w) => w.name === 'job')?.paused).toBeUndefined();
        // From here no navigation until the signal: the run starts and waits, seen live.
        await mark();
        expect(await page.locator('#run-status').innerText()).not.toBe('waiting');
        open.start = true;
        await page.locator('#step-events li[data-type="step.waiting"]').waitFor();
        await page.locator('#run-status', { hasText: 'waiting' }).waitFor();
        expect(await page.locator('#step-events li[data-type="step.succeeded"]').innerText()).toMatch(/ step\.succeeded 'start' attempt 1$/);
        expect(await marked()).toBe(1);
        expect(await page.locator('form[action$="/signal"]').count()).toBe(1);

        await page.fill('form[action$="/signal"] input[name=name]', 'go');
        await page.fill('form[action$="/signal"] input[name=data]', '{"n":41}');
        await page.click('#signal');
        await page.waitForURL(/flash=signal/);
        await mark();
        expect(await page.locator('#run-status').innerText()).not.toBe('succeeded');
        open.after = true;
        await page.locator('#step-events li', { hasText: "step.succeeded 'after'" }).waitFor();
        await page.locator('#run-status', { hasText: 'succeeded' }).waitFor();
        expect(await marked()).toBe(1);
        expect(await page.locator('#output').innerText()).toContain('"n": 42');
        expect((await engine.runs.get(held)).output).toEqual({ n: 42 });
        expect(await statusOf(first)).toBe('waiting');
      } finally {
        await page.close();
        await panel?.close();
        await engine?.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  }

  for (const backend of ['sqlite', 'restate'] as const) {
    it(`${backend}: the list's queue rows: a binding limit shows running = limit and the depth, per key, moving live; internal queues hidden`, async () => {
      // Each body waits until the test lets its run go: what the rows show is the line as it stands.
      const go = new Set<number>();
      const inBody = new Set<number>();
      const llm = queue('llm', { concurrency: 2, rateLimit: { limit: 100, period: '1m' }, key: { concurrency: 1 } });
      const ask = workflow('ask', { queues: [llm] }, (w) => {
        w.trigger(manual());
        w.run(async ({ step, input }) => step.do('call', { queue: llm, key: input.user }, async () => {
          inBody.add(input.n);
          while (!go.has(input.n)) await new Promise((r) => setTimeout(r, 50));
          inBody.delete(input.n);
          return input.n;
        }));
      });
      // A singleton's slot is an internal queue (~singleton.solo): held while the run waits, never a row.
      const solo = workflow('solo', { runs: { singleton: { mode: 'skip' } } }, (w) => {
        w.trigger(manual());
        w.run(async ({ step }) => step.waitForEvent('never', { timeout: '1h' }));
      });
      const dir = mkdtempSync(join(tmpdir(), `tranquil-panel-queues-${backend}-`));
      let engine: Engine | undefined;
      let panel: Awaited<ReturnType<typeof servePanel>> | undefined;
      const page = await browser!.newPage();
      page.setDefaultTimeout(20_000);
      type Marked = { marker?: number };
      const row = (q: string) => page.locator(`#queue-rows tr[data-queue="${q}"]`);
      const cell = (sel: string) => row('llm').locator(sel).innerText();
      try {
        engine = await createEngine({ backend, dataDir: dir, workflows: [ask, solo] });
        await engine.start();
        panel = await servePanel(engine, { pollMs: 0 });
        await page.goto(panel.url);
        await page.evaluate(() => ((globalThis as unknown as Marked).marker = 1));
        const soloRun = (await engine.trigger('solo', null)).runId;
        // u1 x3, u2 x2, u3 x1: one body per key at once, two in all (which two keys: whose
        // ask reached the queue first; on Restate the runs ask concurrently).
        const users = ['u1', 'u1', 'u1', 'u2', 'u2', 'u3'];
        const runs: string[] = [];
        for (const [n, user] of users.entries()) runs.push((await engine.trigger('ask', { n, user })).runId);
        await expect.poll(() => cell('.q-waiting'), { timeout: 20_000 }).toBe('4');
        expect(await cell('.q-running')).toBe('2 of 2');
        expect(await row('llm').locator('.q-running.full').count()).toBe(1);
        const keys = (await row('llm').locator('li[data-key]').allInnerTexts()).map((t) => {
          const m = /^(u\d): ([01]) of 1 running, (\d) waiting$/.exec(t);
          expect(m, t).not.toBeNull();
          return { key: m![1]!, running: Number(m![2]), waiting: Number(m![3]) };
        });
        // Every key, the busiest first (u1: 3 runs), each with its runs running or waiting.
        expect(keys.map((k) => k.key)).toEqual(['u1', 'u2', 'u3']);
        expect(keys.map((k) => k.running + k.waiting)).toEqual([3, 2, 1]);
        expect(keys.reduce((n, k) => n + k.running, 0)).toBe(2);
        expect(await cell('.q-started')).toBe('2');
        await expect.poll(async () => (await engine!.runs.get(soloRun)).status, { timeout: 20_000 }).toBe('waiting');
        expect(await page.locator('#queue-rows tr[data-queue^="~"]').count()).toBe(0);
        expect((await engine.queues.list({ all: true })).find((q) => q.name === '~singleton.solo')?.internal).toEqual({ option: 'runs.singleton', workflow: 'solo' });
        if (backend === 'sqlite' && process.env.PANEL_SCREENSHOT === '1') await page.screenshot({ path: join(ROOT, 'docs/panel-queues.png'), fullPage: true });

        // One body ends: another takes the free slot, the line shortens, live.
        expect(inBody.size).toBe(2);
        go.add([...inBody][0]!);
        await expect.poll(() => cell('.q-waiting'), { timeout: 20_000 }).toBe('3');
        expect(await cell('.q-running')).toBe('2 of 2');
        for (let n = 0; n < users.length; n++) go.add(n);
        for (const id of runs) expect((await engine.result(id, { timeout: '30s' })).status).toBe('succeeded');
        await expect.poll(() => cell('.q-running'), { timeout: 20_000 }).toBe('0 of 2');
        expect(await cell('.q-waiting')).toBe('0');
        expect(await cell('.q-started')).toBe('6');
        expect(await page.evaluate(() => (globalThis as unknown as Marked).marker)).toBe(1);
      } finally {
        // Every body may end (an assertion that failed above leaves none looping).
        for (let n = 0; n < 6; n++) go.add(n);
        await page.close();
        await panel?.close();
        await engine?.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  }

  it('holds (tranquil dev): the held run and its step on the list and the run page, marked held; keep is a click', async () => {
    const nap = workflow('nap', (w) => {
      w.trigger(manual());
      w.run(async ({ step }) => step.sleep('nap', '1h'));
    });
    const dir = mkdtempSync(join(tmpdir(), 'tranquil-panel-holds-'));
    const engine = await createEngine({ dataDir: dir, workflows: [nap] });
    let panel: Awaited<ReturnType<typeof servePanel>> | undefined;
    const page = await browser!.newPage();
    page.setDefaultTimeout(15_000);
    try {
      await engine.start();
      const held = (await engine.trigger('nap', null)).runId;
      const other = (await engine.trigger('nap', null)).runId;
      // What tranquil dev passes (cli/dev.ts): its held runs, and its decision.
      let holds: HeldRun[] = [{ runId: held, workflow: 'nap', position: 1, expected: "do 'extra'", recorded: "sleep 'nap'",
        detail: `run ${held} (nap) at step 1: the code now calls do 'extra', the run recorded sleep 'nap'` }];
      const answers: string[] = [];
      panel = await servePanel(engine, { holds: {
        list: () => holds,
        decide: async (answer) => (answers.push(answer), (holds = []), `kept the old code for 1 run(s)`),
      } });
      await page.goto(panel.url);
      const block = await page.locator('#held').innerText();
      expect(block).toContain('tranquil dev holds 1 run(s)');
      expect(block).toContain(`${held} (nap): run ${held} (nap) at step 1: the code now calls do 'extra', the run recorded sleep 'nap'`);
      await page.getByRole('link', { name: other }).waitFor();
      expect(await page.locator('tr', { hasText: held }).locator('.held-badge').count()).toBe(1);
      expect(await page.locator('tr', { hasText: other }).locator('.held-badge').count()).toBe(0);
      await page.locator('#held').getByRole('link', { name: held }).click();
      await page.waitForURL(/\/runs\//);
      expect(await page.locator('#held').innerText()).toContain('at step 1');
      await page.click('#hold-keep');
      await page.waitForURL(/flash=kept/);
      expect(answers).toEqual(['keep']);
      expect(await page.locator('#flash').innerText()).toBe('kept the old code for 1 run(s)');
      expect(await page.locator('#held').count()).toBe(0);
    } finally {
      await page.close();
      await panel?.close();
      await engine.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
