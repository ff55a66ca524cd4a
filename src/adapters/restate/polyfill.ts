// Node 20 lacks Promise.withResolvers (Node >= 22 has it); @restatedev/restate-sdk 1.17 calls
// it at run time and, without it, every invocation hangs in retries. Every module of this
// folder that imports the SDK imports this file FIRST, so it is evaluated before the SDK.
const P = Promise as unknown as { withResolvers?: unknown };
if (!P.withResolvers) {
  P.withResolvers = function withResolvers<T>() {
    let resolve!: (v: T | PromiseLike<T>) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((a, b) => {
      resolve = a;
      reject = b;
    });
    return { promise, resolve, reject };
  };
}
// The SDK logs every invocation start/end at INFO; the engine keeps the console for what
// matters. RESTATE_LOGGING=INFO (or DEBUG) brings it back. Read once, when the SDK loads.
process.env.RESTATE_LOGGING ??= 'WARN';
export {};
