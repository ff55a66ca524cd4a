// Child process for start-up and idle-memory figures (the harness's own memory must not count).
// Usage: node --import tsx bench/child-idle.ts '<json args>'  (the sources, dev loader), or
//        node bench/.build/child-idle.js '<json args>'        (the production build: this file
//        bundled by scripts/build.mjs --bench, importing the engine from dist/)
//   { mode: 'engine', backend, durability, dataDir }: start an engine on a fresh dir, finish one
//     10-step run, then idle; prints one JSON line, then stays alive until the parent stops it.
//   { mode: 'bare' }: node alone (or node + tsx loader), for the floor.
//   { mode: 'warm' }: node alone after one hot loop, so V8's optimizing compiler (TurboFan) has
//     run once: its code, ~4 MiB of node's binary, is then mapped, as in any host that has run
//     hot code (loading better-sqlite3's files alone makes node's path code hot enough).
//   { mode: 'sqlite', dataDir }: node + better-sqlite3 alone, loaded as the engine's build loads
//     it (its JavaScript bundled, the addon opened by path: src/adapters/sqlite/native-addon.ts,
//     scripts/build.mjs): a WAL file, one transaction of 10 rows, then idle (what the SQLite
//     driver costs before any engine code).
const a = JSON.parse(process.argv[2]!) as { mode: 'engine' | 'bare' | 'warm' | 'sqlite'; backend?: 'sqlite' | 'restate'; durability?: 'full' | 'normal'; dataDir?: string; idleMs: number };
const keepAlive = setInterval(() => {}, 1 << 30);
const report = (o: Record<string, unknown>) => process.stdout.write(JSON.stringify(o) + '\n');

async function main(): Promise<void> {
  if (a.mode === 'bare') {
    await new Promise((r) => setTimeout(r, a.idleMs));
    report({ ready: true, uptimeMs: performance.now() });
    return;
  }
  if (a.mode === 'warm') {
    const f = (s: number, i: number) => (s + i * 7) % 1_000_003;
    let s = 0;
    for (let i = 0; i < 2_000_000; i++) s = f(s, i);
    await new Promise((r) => setTimeout(r, a.idleMs));
    report({ ready: true, s });
    return;
  }
  if (a.mode === 'sqlite') {
    const { default: Database } = await import('better-sqlite3');
    const { dirname, join } = await import('node:path');
    const { mkdirSync } = await import('node:fs');
    const { createRequire } = await import('node:module');
    mkdirSync(a.dataDir!, { recursive: true });
    const addon = join(dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
    const db = new Database(join(a.dataDir!, 'raw.db'), { nativeBinding: addon });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT)');
    const ins = db.prepare('INSERT OR REPLACE INTO t VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 10; i++) ins.run(`k${i}`, 'x'.repeat(200));
    })();
    await new Promise((r) => setTimeout(r, a.idleMs));
    report({ ready: true });
    process.once('SIGTERM', () => {
      db.close();
      clearInterval(keepAlive);
      process.exit(0);
    });
    return;
  }
  const tImport = performance.now();
  const { createEngine } = await import('../compose/index.ts');
  const { tenSteps } = await import('./lib/workflows.ts');
  const t0 = performance.now();
  const engine = await createEngine({ backend: a.backend, dataDir: a.dataDir!, workflows: [tenSteps], durability: a.durability });
  await engine.start();
  const { runId } = await engine.trigger(tenSteps.name, {});
  const v = await engine.result(runId, { timeout: '60s' });
  const t1 = performance.now();
  if (v.status !== 'succeeded') throw new Error(`first run ${v.status}`);
  await new Promise((r) => setTimeout(r, a.idleMs));
  report({
    ready: true,
    importMs: t0 - tImport,
    startToFirstRunMs: t1 - t0,
    processStartToFirstRunMs: t1, // performance.now() counts from process start
    heapUsedMiB: process.memoryUsage().heapUsed / 2 ** 20,
  });
  process.once('SIGTERM', () => {
    void engine.stop().finally(() => {
      clearInterval(keepAlive);
      process.exit(0);
    });
  });
}

main().catch((err) => {
  report({ error: String((err as Error)?.message ?? err) });
  process.exit(1);
});
