// The Runs panel's pages as server-rendered HTML (issue 15; docs/panel.md): no bundle, no CDN,
// one inline stylesheet and one inline script (live refresh: the page re-fetches its own
// `#live` part every second and swaps it in, so no reload and no lost form input). Every
// value from a run is escaped here; nothing else builds HTML.
import type { Explanation } from '../../domain/explain.ts';
import type { Json } from '../../domain/json.ts';
import { publishedState, streamNames, streamOf } from '../../domain/published-state.ts';
import type { RunView, StepView } from '../../domain/run-view.ts';
import { valueText } from '../../domain/value-text.ts';
import type { EventView, ScheduleView, SlotView } from '../../ports/triggers.ts';

export const esc = (v: unknown): string =>
  String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const json = (v: unknown): string => esc(JSON.stringify(v, null, 2));
/** A stored value, readable: a Map as its entries, a Date as ISO (domain/value-text.ts). */
const value = (v: Json | undefined): string => esc(valueText(v, 2));

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;gap:20px;align-items:center}
header a{color:#cfe0ff;text-decoration:none}header b{font-size:16px;margin-right:10px}
main{padding:16px 20px;max-width:1200px}
table{border-collapse:collapse;width:100%;background:#fff}td,th{padding:5px 8px;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top}
th{font-weight:600;background:#eef0f3}
.st{display:inline-block;padding:1px 7px;border-radius:9px;font-size:12px;font-weight:600;background:#e3e6ea}
.st-succeeded{background:#d4f3dc;color:#145c2c}.st-failed,.st-timedout{background:#fbd9d9;color:#8a1c1c}
.st-retrying,.st-blocked{background:#ffe9c2;color:#7a4b00}.st-sleeping,.st-waiting,.st-pending{background:#dde8ff;color:#1c3f8a}
.st-running{background:#e6dcff;color:#47208a}.st-cancelled{background:#e3e6ea;color:#555}.st-paused{background:#ffe9c2;color:#7a4b00}
.why{background:#fff;border-left:5px solid #3b6fd8;padding:10px 14px;margin:0 0 14px}
.why.failed,.why.blocked{border-color:#c62828}.why p{margin:4px 0}.why code{background:#eef0f3;padding:1px 4px}
pre{background:#fff;border:1px solid #e3e6ea;padding:8px;margin:4px 0;max-height:240px;overflow:auto;white-space:pre-wrap}
.axis{position:relative;height:22px;background:#eef0f3;margin:2px 0}.bar{position:absolute;top:3px;height:16px;min-width:3px;border-radius:3px;background:#3b6fd8}
.bar.failed,.bar.timedout{background:#c62828}.bar.retrying{background:#e69500}.bar.sleeping,.bar.waiting{background:repeating-linear-gradient(45deg,#8fb0f0,#8fb0f0 4px,#c9d8f7 4px,#c9d8f7 8px)}
.bar.succeeded{background:#2e8b57}.ticks{display:flex;justify-content:space-between;font-size:11px;color:#667}
form.inline{display:inline-block;margin:0 8px 8px 0}button{padding:5px 12px;border:1px solid #3b6fd8;background:#3b6fd8;color:#fff;border-radius:4px;cursor:pointer}
button.danger{background:#c62828;border-color:#c62828}input,select{padding:4px 6px;border:1px solid #c3c8d0;border-radius:3px}
.held{background:#fff;border-left:5px solid #e69500;padding:10px 14px;margin:0 0 14px}.held ul{margin:6px 0;padding-left:20px}
.events{font:12px/1.4 ui-monospace,monospace;background:#fff;border:1px solid #e3e6ea;padding:6px 6px 6px 40px;margin:4px 0;max-height:300px;overflow:auto}.events:empty{display:none}
#queues{margin:0 0 14px}.q-running.full{color:#8a1c1c;font-weight:600}ul.keys{margin:0;padding-left:16px}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:12px}.err{color:#8a1c1c}.muted{color:#667}.flash{background:#fff3cd;padding:8px 12px;margin-bottom:12px}
`;

// The live part: the page re-fetches its own `#live` (x-panel-fragment) when the server pushes
// a step event (panel-live.ts; a burst is one fetch, plus two shortly after it, 0.7 and 2.5 s,
// for the run's own transition that follows its last step, e.g. a pause taking effect), on the push's (re)connect, and every `poll` ms
// as a fallback (0: never) for what no event of this process tells (runs executed by another
// process). A hidden tab closes its push (a browser gives a host 6 connections: tabs kept
// open must not hold them all) and refreshes nothing; shown, it reconnects and catches up. A
// run page's step events are listed as they arrive, as text. The live part is replaced only
// when what the browser would parse differs from what it shows: the refresh on the push's
// connect, right after load, swapped identical links under a click (the click was lost).
const LIVE = `
const D=document.body.dataset,poll=+D.poll||0;let last=null,busy=false,again=false,stale=false,t=null,trail=[];
async function refresh(){if(document.hidden){stale=true;return;}if(busy){again=true;return;}busy=true;
try{const r=await fetch(location.href,{headers:{'x-panel-fragment':'1'}});if(r.ok){const h=await r.text();const el=document.getElementById('live');if(el&&h!==last){const tp=document.createElement('template');tp.innerHTML=h;if(tp.innerHTML!==el.innerHTML)el.innerHTML=tp.innerHTML;}last=h;}}catch{}
busy=false;if(again){again=false;refresh();}}
function soon(){if(!t)t=setTimeout(()=>{t=null;refresh();},100);for(const x of trail)clearTimeout(x);trail=[setTimeout(refresh,700),setTimeout(refresh,2500)];}
let es=null;function listen(){if(!D.live||es)return;es=new EventSource(D.live);es.addEventListener('hello',soon);es.addEventListener('run',soon);es.addEventListener('steps',soon);
es.addEventListener('step',(m)=>{const ol=document.getElementById('step-events');if(ol){try{const d=JSON.parse(m.data);const li=document.createElement('li');
li.textContent=d.line;li.dataset.type=d.type;ol.appendChild(li);while(ol.children.length>500)ol.firstElementChild.remove();const n=document.getElementById('step-events-none');if(n)n.remove();}catch{}}soon();});}
document.addEventListener('visibilitychange',()=>{if(document.hidden){if(es){es.close();es=null;}return;}listen();if(stale){stale=false;refresh();}});
if(!document.hidden)listen();if(poll>0)setInterval(refresh,poll);
`;

/** Where a page's live part comes from: the push's URL (none: no push) and the fallback poll. */
export interface LiveSource {
  push?: string;
  pollMs: number;
}

export function page(title: string, base: string, body: string, live: string, src: LiveSource = { pollMs: 0 }, tail = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} - Tranquil</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head><body${src.push ? ` data-live="${esc(src.push)}"` : ''} data-poll="${src.pollMs}">
<header><b>Tranquil</b><a href="${base}/">Runs</a><a href="${base}/schedules">Schedules</a><a href="${base}/events">Events</a></header>
<main>${body}<div id="live">${live}</div>${tail}</main><script>${LIVE}</script></body></html>`;
}

/** The run page's list of step events, filled by the page's script as they arrive. */
export function stepEventsBlock(): string {
  return `<section id="step-events-box"><h3>Step events</h3><p class="muted" id="step-events-none">none since this page opened (they are pushed as the run's steps start, succeed, fail, retry, sleep, wait, take a signal, publish or write a chunk)</p><ol id="step-events" class="events"></ol></section>`;
}

const status = (s: string) => `<span class="st st-${esc(s)}">${esc(s)}</span>`;

export interface ListQuery {
  workflow?: string;
  status?: string;
  since?: string;
  until?: string;
  cursor?: string;
}

export function runsFilters(base: string, q: ListQuery, statuses: readonly string[]): string {
  return `<form method="get" action="${base}/" style="margin-bottom:12px">
<input name="workflow" placeholder="workflow" value="${esc(q.workflow)}">
<select name="status"><option value="">any status</option>${statuses.map((s) => `<option${s === q.status ? ' selected' : ''}>${esc(s)}</option>`).join('')}</select>
<input name="since" placeholder="created since (ISO, UTC)" value="${esc(q.since)}" size="22"> <input name="until" placeholder="until (ISO, UTC)" value="${esc(q.until)}" size="22">
<button type="submit">Filter</button></form>`;
}

/** A run `tranquil dev` holds: a reload's code would diverge from it at `detail`. */
export interface HeldView {
  runId: string;
  workflow: string;
  detail: string;
}

/** The held runs and the two answers (keep the old code for them, or let them fail); `run` is
 *  the page the answer returns to. Empty when nothing is held. */
export function heldBlock(base: string, held: readonly HeldView[], token: string, run: string): string {
  if (held.length === 0) return '';
  const items = held.map((h) => `<li><a href="${base}/runs/${encodeURIComponent(h.runId)}">${esc(h.runId)}</a> (${esc(h.workflow)}): ${esc(h.detail)}</li>`);
  const answer = (value: string, id: string, label: string, cls = '') =>
    `<form class="inline" method="post" action="${base}/holds/decide"><input type="hidden" name="_token" value="${esc(token)}">` +
    `<input type="hidden" name="answer" value="${value}"><input type="hidden" name="run" value="${esc(run)}"><button id="${id}"${cls}>${label}</button></form>`;
  return `<section class="held" id="held"><p><b>tranquil dev holds ${held.length} run(s): the code it reloaded would diverge from them.</b> They wait, untouched, until you decide; every other run goes on.</p>
<ul>${items.join('')}</ul>${answer('keep', 'hold-keep', 'Keep the old code for them')}${answer('fail', 'hold-fail', 'Let them fail', ' class="danger"')}
<p class="muted">Or undo the edit: the reload resumes them on their own code.</p></section>`;
}

export function runsTable(base: string, runs: RunView[], q: ListQuery, next: string | undefined, held: ReadonlySet<string> = new Set()): string {
  const params = (extra: Record<string, string | undefined>) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries({ workflow: q.workflow, status: q.status, since: q.since, until: q.until, ...extra })) if (v) p.set(k, v);
    return p.toString();
  };
  const rows = runs.map((r) => `<tr><td><a href="${base}/runs/${encodeURIComponent(r.runId)}">${esc(r.runId)}</a></td><td>${esc(r.workflow)}</td>
<td>${status(r.status)}${held.has(r.runId) ? ' <span class="st st-blocked held-badge">held</span>' : ''}</td><td>${esc(r.createdAt)}</td><td>${esc(r.updatedAt)}</td><td>${r.error ? `<span class="err">${esc(r.error.name)}: ${esc(r.error.message)}</span>` : ''}</td></tr>`);
  return `<table><thead><tr><th>run</th><th>workflow</th><th>status</th><th>created</th><th>updated</th><th>error</th></tr></thead>
<tbody>${rows.join('') || '<tr><td colspan="6" class="muted">no runs</td></tr>'}</tbody></table>
<p>${q.cursor ? `<a href="${base}/?${params({})}">first page</a> ` : ''}${next ? `<a id="next-page" href="${base}/?${params({ cursor: next })}">next page</a>` : ''}</p>`;
}

export function whyBlock(e: Explanation): string {
  return `<section class="why ${esc(e.status)}" id="why"><p><b>${esc(e.summary)}</b></p><p>Next: ${esc(e.next).replace(/`([^`]+)`/g, '<code>$1</code>')}</p></section>`;
}

/** Steps on one time axis from the run's creation to its last moment (now while it lives). */
export function timeline(run: RunView, now: number): string {
  const t0 = Date.parse(run.createdAt);
  const live = !['succeeded', 'failed', 'cancelled'].includes(run.status);
  const times = run.steps.flatMap((s) => [s.startedAt, s.endedAt, s.wakeAt, s.nextRetryAt]).filter(Boolean).map((t) => Date.parse(t!));
  const t1 = Math.max(t0 + 1, Date.parse(run.updatedAt), ...times, live ? now : 0);
  const pct = (t: number) => (((t - t0) / (t1 - t0)) * 100).toFixed(2);
  const rows = run.steps.filter((s) => s.kind !== 'now' && s.kind !== 'random').map((s) => {
    const start = s.startedAt ? Date.parse(s.startedAt) : t0;
    const end = s.endedAt ? Date.parse(s.endedAt) : s.wakeAt ? Date.parse(s.wakeAt) : s.nextRetryAt ? Date.parse(s.nextRetryAt) : live ? now : start;
    const width = Math.max(0, ((end - start) / (t1 - t0)) * 100).toFixed(2);
    const ms = end - start;
    return `<tr><td>${esc(s.name)} <span class="muted">(${esc(s.kind)})</span></td><td style="width:55%"><div class="axis">
<div class="bar ${esc(s.status)}" style="left:${pct(start)}%;width:${width}%" title="${esc(s.startedAt)} .. ${esc(s.endedAt ?? s.wakeAt ?? s.nextRetryAt ?? '')}"></div></div></td>
<td>${status(s.status)} ${s.attempts > 1 ? `${s.attempts} attempts` : ''} <span class="muted">${ms >= 0 ? fmtMs(ms) : ''}</span>${stepNote(s)}</td></tr>`;
  });
  return `<table class="timeline"><thead><tr><th>step</th><th><div class="ticks"><span>${esc(run.createdAt)}</span><span>${esc(new Date(t1).toISOString())}</span></div></th><th>status</th></tr></thead>
<tbody>${rows.join('') || '<tr><td colspan="3" class="muted">no steps yet</td></tr>'}</tbody></table>`;
}

function stepNote(s: StepView): string {
  const bits: string[] = [];
  if (s.error) bits.push(`<div class="err">${esc(s.error.name)}: ${esc(s.error.message)}</div>`);
  if (s.status === 'retrying' && s.nextRetryAt) bits.push(`<div>attempt ${s.attempts + 1}${s.retryLimit !== undefined ? ` of ${s.retryLimit}` : ''} at ${esc(s.nextRetryAt)}</div>`);
  if (s.status === 'sleeping' && s.wakeAt) bits.push(`<div>until ${esc(s.wakeAt)}</div>`);
  if (s.status === 'waiting') bits.push(`<div>${s.wakeAt ? `timeout at ${esc(s.wakeAt)}` : 'no timeout'}</div>`);
  return bits.join('');
}

const fmtMs = (ms: number): string => (ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : ms < 3_600_000 ? `${Math.round(ms / 60_000)} min` : `${(ms / 3_600_000).toFixed(1)} h`);

/** A child run's parent and a parent's children (docs/children.md), linked (run pages are
 *  siblings: `<base>/runs/<id>`). Closes the run table and adds the children's. */
function family(run: RunView): string {
  const link = (id: string) => `<a href="${encodeURIComponent(id)}">${esc(id)}</a>`;
  const parent = run.parent ? `<tr><th>parent</th><td id="parent">${link(run.parent.runId)} step '${esc(run.parent.step)}'</td></tr>` : '';
  const rerunOf = run.rerunOf ? `<tr><th>rerun of</th><td id="rerun-of">${link(run.rerunOf)}</td></tr>` : '';
  const reruns = run.reruns?.length ? `<tr><th>reruns</th><td id="reruns">${run.reruns.map(link).join(', ')}</td></tr>` : '';
  const kids = run.children?.length
    ? `<h3>Child runs</h3><table id="children">${run.children.map((c) => `<tr><td>${link(c.runId)}</td><td>${esc(c.workflow)}</td><td>${status(c.status)}</td><td>step '${esc(c.step)}'</td></tr>`).join('')}</table>`
    : '';
  return `${parent}${rerunOf}${reruns}</table>${kids}`;
}

export function runDetails(run: RunView): string {
  const keys = run.steps.filter((s) => s.kind === 'do').map((s) => `${run.runId}/${s.name}`);
  return `<div class="grid"><div><h3>Input</h3><pre id="input">${value(run.input)}</pre>
<h3>Output</h3><pre id="output">${run.output === undefined ? '<span class="muted">none</span>' : value(run.output)}</pre></div>
<div><h3>Run</h3><table><tr><th>workflow</th><td>${esc(run.workflow)}</td></tr><tr><th>status</th><td id="run-status">${status(run.status)}</td></tr>
<tr><th>pinned version</th><td>${esc(run.version)}</td></tr><tr><th>created</th><td>${esc(run.createdAt)}</td></tr><tr><th>updated</th><td>${esc(run.updatedAt)}</td></tr>${run.cancel ? `<tr><th>cancelled by</th><td id="cancelled-by">${esc(run.cancel.by)} at ${esc(run.cancel.at)}</td></tr>` : ''}${run.paused ? `<tr><th>paused by</th><td id="paused-by">${esc(run.paused.by)} at ${esc(run.paused.at)}</td></tr>` : ''}${family(run)}
<h3>Error</h3><pre>${run.error ? json(run.error) : '<span class="muted">none</span>'}</pre>
<h3>Idempotency keys</h3><pre>${keys.length ? esc(keys.join('\n')) : '<span class="muted">none</span>'}</pre></div></div>`;
}

export function actions(base: string, run: RunView, token: string, approvable: boolean): string {
  const id = encodeURIComponent(run.runId);
  const hidden = `<input type="hidden" name="_token" value="${esc(token)}">`;
  const out: string[] = [];
  const button = (verb: string, label: string, cls = '') =>
    `<form class="inline" method="post" action="${base}/runs/${id}/${verb}">${hidden}<button${cls} id="${verb}">${label}</button></form>`;
  const ended = ['succeeded', 'failed', 'cancelled'].includes(run.status);
  if (run.status === 'failed') out.push(button('retry', 'Retry'));
  // Run control (docs/control.md): offered where the engine would take it; a refusal (the run
  // moved on since the page was drawn) comes back as the engine's one-line error.
  if (!ended && run.status !== 'paused' && run.status !== 'blocked') out.push(button('pause', 'Pause'));
  if (run.status === 'paused' || run.status === 'cancelled') out.push(button('resume', 'Resume'));
  if (ended) out.push(button('rerun', 'Rerun'));
  if (!ended) {
    // The signal form is not here: it sits in the page's fixed part (panel.ts), where a
    // refresh of this live part cannot wipe what is being typed.
    out.push(button('cancel', 'Cancel', ' class="danger"'));
  }
  // The run's whole workflow (docs/control.md "Pause a workflow"): a held run offers its
  // workflow's resume (its held runs go on in creation order, or are skipped); any other run,
  // the workflow's pause. The panel has no workflows page: the run page is where one looks.
  const wf = encodeURIComponent(run.workflow);
  const wfButton = (verb: string, label: string, extra = '') =>
    `<form class="inline" method="post" action="${base}/workflows/${wf}/${verb}">${hidden}<input type="hidden" name="run" value="${esc(run.runId)}">${extra}<button id="workflow-${verb}${extra ? '-skip' : ''}">${label}</button></form>`;
  if (run.status === 'paused' && run.paused?.held) {
    out.push(wfButton('resume', 'Resume workflow'));
    out.push(wfButton('resume', 'Resume workflow, skip held runs', '<input type="hidden" name="held" value="skip">'));
  } else {
    out.push(wfButton('pause', 'Pause workflow'));
  }
  // The declaration hash the page shows: approve refuses if the file changed since.
  const declared = run.error?.fields?.declared;
  if (approvable) {
    out.push(`<form class="inline" method="post" action="${base}/workflows/${encodeURIComponent(run.workflow)}/approve">${hidden}<input type="hidden" name="run" value="${esc(run.runId)}">` +
      `${typeof declared === 'string' ? `<input type="hidden" name="hash" value="${esc(declared)}">` : ''}<button id="approve">Approve declaration</button></form>`);
  }
  return out.length ? `<section id="actions">${out.join('')}</section>` : '';
}

/** A stream's chunks as text: a string chunk as written (a token stream reads as prose), any
 *  other value in its readable form on a line of its own. */
function chunkText(chunks: readonly Json[]): string {
  return chunks.map((c) => (typeof c === 'string' ? c : `${valueText(c)}\n`)).join('');
}

/** The run's published state (latest value per key) and its streams (docs/live-output.md),
 *  read from its journal; empty when it has neither. All of it comes from workflow code:
 *  escaped like every other run value. */
export function liveOutput(run: RunView): string {
  const state = publishedState(run.steps);
  const names = streamNames(run.steps);
  if (state.length === 0 && names.length === 0) return '';
  const rows = state.map((p) => `<tr data-key="${esc(p.key)}"><th>${esc(p.key)}</th><td><pre class="state-value">${value(p.value)}</pre></td><td class="muted">${esc(p.publishedAt ?? '')}</td></tr>`);
  const streams = names.map((n, i) => {
    const s = streamOf(run.steps, n);
    return `<div class="stream" id="stream-${i}" data-stream="${esc(n)}"><p><b>${esc(n)}</b> <span class="chunks">${s.chunks.length} chunk${s.chunks.length === 1 ? '' : 's'}</span>` +
      `${s.closed ? ' <span class="muted">closed</span>' : ''}</p><pre class="stream-text">${esc(chunkText(s.chunks))}</pre></div>`;
  });
  return `<section id="live-output">${rows.length ? `<h3>Published state</h3><table id="state">${rows.join('')}</table>` : ''}${streams.length ? `<h3>Streams</h3>${streams.join('')}` : ''}</section>`;
}

export function schedulesPage(schedules: ScheduleView[], slots: SlotView[]): string {
  return `<h2>Schedules</h2><table><thead><tr><th>workflow</th><th>cron</th><th>timezone</th><th>catch-up</th><th>active</th><th>next</th></tr></thead><tbody>
${schedules.map((s) => `<tr><td>${esc(s.workflow)}</td><td>${esc(s.cron)}</td><td>${esc(s.timezone)}</td><td>${esc(s.catchUp)}</td><td>${s.active ? 'yes' : 'no'}</td><td>${esc(s.nextAt ?? '')}</td></tr>`).join('') || '<tr><td colspan="6" class="muted">no schedules</td></tr>'}
</tbody></table><h2>Slot ledger</h2><table><thead><tr><th>workflow</th><th>slot</th><th>fate</th><th>why</th><th>run</th></tr></thead><tbody>
${slots.map((s) => `<tr><td>${esc(s.workflow)}</td><td>${esc(s.slot)}${s.count > 1 ? ` (+${s.count - 1} to ${esc(s.until)})` : ''}</td><td>${status(s.fate)}</td><td>${esc(s.reason)}</td><td>${s.runId ? esc(s.runId) : ''}</td></tr>`).join('') || '<tr><td colspan="5" class="muted">no slots yet</td></tr>'}
</tbody></table>`;
}

export function eventsPage(base: string, events: EventView[]): string {
  return `<h2>Event inbox</h2><table><thead><tr><th>id</th><th>name</th><th>received</th><th>payload</th><th>runs</th></tr></thead><tbody>
${events.map((e) => `<tr><td>${esc(e.id)}</td><td>${esc(e.name)}</td><td>${esc(e.createdAt)}</td><td><pre>${value(e.payload)}</pre></td><td>${e.runIds.length ? e.runIds.map((r) => `<a href="${base}/runs/${encodeURIComponent(r)}">${esc(r)}</a>`).join('<br>') : '<span class="muted">no subscriber</span>'}</td></tr>`).join('') || '<tr><td colspan="5" class="muted">no events</td></tr>'}
</tbody></table>`;
}
