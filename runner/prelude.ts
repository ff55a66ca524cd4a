// Loaded before every run and describe child's entry (deno run --preload). A workflow child is
// not Node: Deno's Node-compat globals are removed before any module looks at them. Touching
// Deno's lazily built `process` reads /proc/self/exe, which the bubblewrap view has no /proc
// for (mounting it would show the host's processes): the child panicked at start once the
// value codec loaded devalue, which probes `typeof process` at import. Without them devalue
// takes its plain-JS paths; node: built-ins stay refused by the module graph check.
for (const name of ['process', 'Buffer']) {
  delete (globalThis as Record<string, unknown>)[name];
}
