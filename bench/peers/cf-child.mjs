// Cloudflare Workflows' side of the peer rows: a WorkflowEntrypoint run by miniflare 4 in its
// real workerd binary, instances persisted to disk (workflowsPersist: args.store), default
// limits. A run is one HTTP request into the Worker, which creates an instance and polls its
// status every POLL_MS until it is complete (the binding has no await-the-result call), so a
// run's time includes up to POLL_MS of polling.
// Usage: node bench/peers/cf-child.mjs '<json args>' (args: bench/peers/shapes.mjs main).
import { Log, LogLevel, Miniflare } from 'miniflare';
import { main, RESULT } from './shapes.mjs';

const POLL_MS = 5;
const script = `
import { WorkflowEntrypoint } from 'cloudflare:workers';
const RESULT = ${JSON.stringify(RESULT)};
export class PeerSteps extends WorkflowEntrypoint {
  async run(event, step) {
    const { n, fan } = event.payload;
    if (fan) return (await Promise.all(Array.from({ length: n }, (_, i) => step.do('item-' + i, async () => RESULT)))).length;
    for (let i = 0; i < n; i++) await step.do('s' + i, async () => RESULT);
    return n;
  }
}
export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    const inst = await env.WF.create({ params: { n: Number(u.searchParams.get('n')), fan: u.searchParams.get('fan') === '1' } });
    for (;;) {
      const s = await inst.status();
      if (s.status === 'complete') return new Response('ok');
      if (s.status === 'errored' || s.status === 'terminated') return new Response(JSON.stringify(s), { status: 500 });
      await new Promise((r) => setTimeout(r, ${POLL_MS}));
    }
  },
};`;

async function open(a) {
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2026-07-01',
    workflows: { WF: { name: 'peer-steps', className: 'PeerSteps' } },
    workflowsPersist: a.store + (a.storeSuffix ?? ''),
    cf: false, // no request to Cloudflare for a Request.cf object: nothing leaves the machine
    log: new Log(process.env.PEERS_CF_LOG ? LogLevel.DEBUG : LogLevel.WARN),
  });
  await mf.ready;
  return {
    sys: {
      async run(n, fan) {
        const r = await mf.dispatchFetch(`http://localhost/?n=${n}&fan=${fan ? 1 : 0}`);
        const body = await r.text();
        if (r.status !== 200) throw new Error(`instance ended ${r.status}: ${body.slice(0, 200)}`);
      },
    },
    close: () => mf.dispose(),
  };
}

const a = JSON.parse(process.argv[2]);
await main(a, open, { reopen: (x) => open({ ...x, storeSuffix: '-fallback' }) });
