// Issue 12's bench row: steps/s of a Restate cluster (3 restate-server nodes, replicated log
// with replication 2, in their own network namespaces) serving two engine replicas behind
// HAProxy, beside a single engine on its embedded restate-server, in the same sitting with
// repetitions interleaved (each pair shares the machine's load). The same 10-step workflow,
// closed loop: `conc` clients each trigger a run and wait for its result (for the cluster,
// half of them through each replica). Needs root, iproute2 and HAProxy (as the cluster test);
// reported as n/a with the reason otherwise. The setup is test/cluster's.
import { join } from 'node:path';
import { createEngine, type Engine } from '../../compose/index.ts';
import { haproxyUnavailable } from '../../test/cluster/haproxy.ts';
import { netnsUnavailable } from '../../test/cluster/netns.ts';
import { startTopology, type Topology } from '../../test/cluster/topology.ts';
import { nowMs, summarize } from './stats.ts';
import { STEPS_PER_RUN, tenSteps } from './workflows.ts';

export interface ClusterRow {
  clusterStepsPerS: { median: number; min: number; max: number; samples: number[] };
  embeddedStepsPerS: { median: number; min: number; max: number; samples: number[] };
  /** Medians of the per-pair ratio cluster / embedded. */
  ratio: number;
  runsPerRep: number;
  concurrency: number;
}

export function clusterUnavailable(): string | undefined {
  return netnsUnavailable() ?? haproxyUnavailable();
}

async function closedLoop(conc: number, runs: number, one: (client: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = nowMs();
  await Promise.all(Array.from({ length: conc }, async (_, c) => {
    while (next < runs) {
      next++;
      await one(c);
    }
  }));
  return (runs * STEPS_PER_RUN) / ((nowMs() - t0) / 1000);
}

export async function benchCluster(o: { quick: boolean; log: (...a: unknown[]) => void }): Promise<ClusterRow> {
  const reps = o.quick ? 3 : 5;
  const runs = o.quick ? 40 : 100;
  const conc = 10;
  let topology: Topology | undefined;
  let embedded: Engine | undefined;
  try {
    topology = await startTopology('bench-cluster');
    const { replicas, dir } = topology;
    embedded = await createEngine({ backend: 'restate', dataDir: join(dir, 'embedded'), workflows: [tenSteps], log: { level: 'error' } });
    await embedded.start();
    const e = embedded;
    let seq = 0;
    const viaCluster = async (client: number) => {
      const r = replicas[client % 2]!;
      const runId = `bench-${seq++}`;
      await r.call('trigger', { workflow: 'ten', runId });
      const v = await r.call<{ status: string }>('result', { runId, timeout: '120s' });
      if (v.status !== 'succeeded') throw new Error(`cluster run ${runId} ended ${v.status}`);
    };
    const viaEmbedded = async () => {
      const { runId } = await e.trigger(tenSteps.name, {});
      const v = await e.result(runId, { timeout: '120s' });
      if (v.status !== 'succeeded') throw new Error(`embedded run ${runId} ended ${v.status}`);
    };
    // Warm-up: deployments registered, partitions led, connections open.
    await closedLoop(conc, conc, viaCluster);
    await closedLoop(conc, conc, viaEmbedded);
    const c: number[] = [];
    const s: number[] = [];
    for (let i = 0; i < reps; i++) {
      c.push(await closedLoop(conc, runs, viaCluster));
      s.push(await closedLoop(conc, runs, viaEmbedded));
      o.log(`cluster rep ${i + 1}: cluster ${c.at(-1)!.toFixed(0)} steps/s, embedded ${s.at(-1)!.toFixed(0)} steps/s`);
    }
    const fig = (xs: number[]) => {
      const m = summarize(xs);
      return { median: m.median, min: m.min, max: m.max, samples: xs.map((x) => Number(x.toFixed(1))) };
    };
    return { clusterStepsPerS: fig(c), embeddedStepsPerS: fig(s), ratio: summarize(c.map((x, i) => x / s[i]!)).median, runsPerRep: runs, concurrency: conc };
  } finally {
    await embedded?.stop().catch(() => {});
    await topology?.stop();
  }
}
