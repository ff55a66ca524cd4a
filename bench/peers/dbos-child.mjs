// DBOS Transact for TypeScript's side of the peer rows: its function API on a Postgres system
// database the bench started (bench/lib/postgres.ts; args.store is the database URL, one
// fresh database per measurement, created by DBOS at launch). Defaults otherwise (pool of 10).
// Usage: node bench/peers/dbos-child.mjs '<json args>' (args: bench/peers/shapes.mjs main).
import { DBOS } from '@dbos-inc/dbos-sdk';
import { main, RESULT } from './shapes.mjs';

const step = async () => RESULT;
const steps = DBOS.registerWorkflow(async (n, fan) => {
  if (fan) return (await Promise.all(Array.from({ length: n }, (_, i) => DBOS.runStep(step, { name: `item-${i}` })))).length;
  for (let i = 0; i < n; i++) await DBOS.runStep(step, { name: `s${i}` });
  return n;
}, { name: 'peer-steps' });

async function open(a) {
  DBOS.setConfig({ name: 'tranquil-bench-peers', systemDatabaseUrl: a.store, logLevel: 'error' });
  await DBOS.launch();
  return {
    sys: {
      async run(n, fan) {
        const h = await DBOS.startWorkflow(steps)(n, fan);
        await h.getResult();
      },
    },
    close: () => DBOS.shutdown(),
  };
}

await main(JSON.parse(process.argv[2]), open);
