// Engine configuration: one zod-checked object. A bad field fails createEngine() with a
// one-line message naming it.
import * as z from 'zod';
import { ValidationError } from '../src/domain/errors.ts';
import { parseOrThrow } from '../src/domain/validate.ts';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../src/domain/json.ts';
import { readDuration } from '../src/domain/duration.ts';
import { DEFAULT_CANCEL_GRACE_MS } from '../src/domain/cancel.ts';

/** A JSON text is one JS string: V8 caps those at ~512 MiB, and a value is parsed next to it. */
const MAX_PAYLOAD_CEILING = 256 * 1024 * 1024;
/** restate-server refuses a message over 32 MiB (`message-size-limit`) and retries the
 *  invocation for ever; a value travels with a small envelope (measured: a 31.9 MiB step
 *  result goes through, 32.1 MiB does not), so 2 MiB is kept for that. */
const MAX_PAYLOAD_ON_RESTATE = 30 * 1024 * 1024;
import { LOG_LEVELS, type LogSink } from '../src/ports/logger.ts';
import type { RunLogSink } from '../src/ports/run-log.ts';
import { LOG_FORMATS } from '../src/runtime/log-format.ts';
import type { Action } from '../src/runtime/plain/compile.ts';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';

const isLoopback = (host: string): boolean => host === 'localhost' || host === '::1' || /^127\./.test(host);
const isWildcard = (host: string): boolean => host === '0.0.0.0' || host === '::';

/** Where the SDK endpoint binds (`host`, `port`) and the URL Restate is told to call (`url`:
 *  the address every Restate node can reach, e.g. a load balancer in front of replicas).
 *  Defaults: 127.0.0.1, a free port remembered in the data dir, `http://<host>:<port>/`. */
const endpointSchema = () => z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).optional(),
    url: z
      .string()
      .url()
      .refine((u) => /^https?:$/.test(new URL(u).protocol), 'expected an http:// or https:// URL')
      .transform((u) => (u.endsWith('/') ? u : `${u}/`))
      .optional(),
  })
  .strict()
  .superRefine((e, c) => {
    if (isWildcard(e.host) && !e.url) c.addIssue({ code: 'custom', path: ['url'], message: `required when host is ${e.host}: Restate needs an address it can reach` });
  });

/** A duration (ms or '30d'), at least 1 ms. */
const durationField = () => z.union([z.number(), z.string()]).transform((v, c) => {
  const ms = readDuration(v);
  if (typeof ms === 'string' || ms < 1) c.addIssue({ code: 'custom', message: typeof ms === 'string' ? ms : 'must be positive' });
  return typeof ms === 'number' ? ms : 0;
});

/** A file system path: the OS refuses a NUL byte with a TypeError deep in fs; say it here. */
const pathField = () => z.string().min(1).refine((p) => !p.includes('\0'), 'must not contain a NUL byte');

/** An optional section the input does not give: it can only be undefined, so its schemas are
 *  not built (the first build of each zod schema kind in a process is most of what reading the
 *  config costs at start). A section given is checked by its full schema, same messages. */
const section = <T extends z.ZodType>(given: boolean, build: () => T): T => (given ? build() : (z.undefined().optional() as unknown as T));

// Built per resolveConfig call and dropped after it, not kept at module level: the config is
// read once per engine, and its ~200 zod schemas would otherwise stay in every engine's heap
// (docs/performance.md, "Idle memory"). Building it costs ~1 ms per createEngine once zod is warm
// (measured under tsx, median of 200); the first build in a process pays zod's own set-up,
// which the module-level schema paid at import. `given` names the keys the input has: the
// optional sections it lacks are not built (see section).
const configSchema = (given: (key: string) => boolean = () => true) => z
  .object({
    backend: z.enum(['sqlite', 'restate']).optional(),
    dataDir: pathField().default('.tranquil'),
    workflows: z.array(z.unknown()).default([]),
    /** Workflow files (paths): each runs in a sandboxed Deno child (docs/runner.md), never in
     *  this process. */
    workflowFiles: z.array(pathField()).default([]),
    /** Plain-data workflows (YAML files, docs/plain-workflows.md), run in-process. */
    plainWorkflows: z.array(pathField()).default([]),
    /** The functions plain workflows' `action:` steps name: `{ 'mail.send_template': fn }`. */
    actions: z.record(z.string().min(1), z.custom<Action>((v) => typeof v === 'function', 'expected a function (input, ctx) => output')).default({}),
    /** The Deno runner: `binary` overrides the locked npm package's deno. */
    deno: section(given('deno'), () => z
      .object({
        binary: z.string().min(1).optional(),
        /** How often a run child sends a heartbeat (ms, default 1000). */
        heartbeatInterval: z.number().int().min(10).max(60_000).optional(),
        /** A child silent this long is killed by PID; its running attempt fails (ms, default 10000). */
        heartbeatTimeout: z.number().int().min(100).max(3_600_000).optional(),
        /** How long a warm child (spawned after an execution, loaded, waiting for the next
         *  execution of the same version) is kept (ms, default 30000; 0 = none). */
        warmIdle: z.number().int().min(0).max(3_600_000).optional(),
        /** 'auto' (default): each child runs under bubblewrap where it works (Linux);
         *  'off': not (docs/runner.md, Threat model). */
        sandbox: z.enum(['auto', 'off']).optional(),
        /** A child's memory cap, MiB (default 1024): V8's heap limit, and RLIMIT_DATA of the
         *  cap plus 1024 (what V8 reserves at start) where prlimit exists, which bounds
         *  buffers too. Exceeding it fails the attempt (or the run, outside any step). */
        memory: z.number().int().min(64).max(1_048_576).optional(),
        /** The largest file a child may write, bytes (default 1 GiB): RLIMIT_FSIZE through
         *  prlimit (Linux). It bounds each file, not their total. Writing past it ends the
         *  child: the attempt fails with that reason (or the run, outside any step). */
        maxFileBytes: z.number().int().min(1024).max(Number.MAX_SAFE_INTEGER).optional(),
        /** What a run's children may write to storage in total, bytes (default 4 GiB): read
         *  from Linux's per-process I/O accounting every 200 ms; past it the child is killed
         *  and the attempt fails with that reason. Counted per run in this engine process. */
        maxWriteBytes: z.number().int().min(1024 * 1024).max(Number.MAX_SAFE_INTEGER).optional(),
        /** How long describing a file may take (ms, default 30000): top-level code that
         *  spins is reported as broken instead of hanging start, trigger and validate. */
        describeTimeout: z.number().int().min(100).max(3_600_000).optional(),
        /** Paths no workflow file may be granted, besides the data dir and the key file
         *  (`tranquil serve` adds its config file). */
        protect: z.array(z.string().min(1)).optional(),
      })
      .strict()
      .refine((d) => (d.heartbeatTimeout ?? 10_000) > (d.heartbeatInterval ?? 1_000), 'heartbeatTimeout must be longer than heartbeatInterval')
      .optional()),
    /** Open the control channel on start (docs/host.md, "An app's own engine"): another
     *  process of this user (the app's other parts, the CLI) can then attach() to this
     *  engine as to a `tranquil serve`. Loopback only, token in <dataDir>/serve.json (0600). */
    control: z.boolean().default(false),
    /** 'full' = every acknowledged commit is fsync'd (default); 'normal' = WAL without fsync per commit. */
    durability: z.enum(['full', 'normal']).default('full'),
    maxConcurrentRuns: z.number().int().min(1).max(100_000).default(1000),
    /** Largest JSON (UTF-8 bytes) of one step result, run input, signal or event payload;
     *  the same on every backend (docs/semantics.md). Default 16 MiB. */
    maxPayloadBytes: z.number().int().min(1024, 'at least 1024').max(MAX_PAYLOAD_CEILING, 'at most 256 MiB').default(DEFAULT_MAX_PAYLOAD_BYTES),
    /** How long a cancelled run's cleanup (its catch/finally steps) may run before the run
     *  ends anyway (docs/semantics.md `## Cancel`). Default 1 minute. */
    cancelGrace: z
      .union([z.number(), z.string()])
      .transform((v, c) => {
        const ms = readDuration(v);
        if (typeof ms === 'string' || ms < 0) c.addIssue({ code: 'custom', message: typeof ms === 'string' ? ms : 'must not be negative' });
        return typeof ms === 'number' ? ms : 0;
      })
      .default(DEFAULT_CANCEL_GRACE_MS),
    webhook: section(given('webhook'), () => z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(0),
        /** Largest accepted webhook body; larger ones get 413. Default 1 MiB. */
        bodyLimitBytes: z.number().int().min(1).max(1024 ** 3).default(1024 * 1024),
        /** false: the engine opens no port of its own; the app mounts engine.handleWebhook. */
        listen: z.boolean().default(true),
      })
      .strict()
      .optional()),
    /** Where the engine's (and the Restate SDK's) messages go: `level` (default 'warn';
     *  'silent' = nothing), `sink(level, message)` (default: stderr, `tranquil: ` prefix).
     *  `format`: how stderr lines are written, 'text' (default) or 'json' (one object per
     *  line). `runs`: the lines of ctx.log and step bodies (docs/observability.md, "Logs"):
     *  `level` (default 'info'), `sink(record)` (default: stderr in `format`). */
    log: section(given('log'), () => z
      .object({
        level: z.enum(LOG_LEVELS).default('warn'),
        sink: z.custom<LogSink>((v) => typeof v === 'function', 'expected a function (level, message) => void').optional(),
        format: z.enum(LOG_FORMATS).default('text'),
        runs: z
          .object({
            level: z.enum(LOG_LEVELS).default('info'),
            sink: z.custom<RunLogSink>((v) => typeof v === 'function', 'expected a function (record) => void').optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional()),
    /** OpenTelemetry (docs/observability.md): spans and metrics go to these providers;
     *  default: the global ones registered by the app's SDK (none: nothing is recorded).
     *  `false`: the engine calls no OpenTelemetry API at all. */
    telemetry: section(given('telemetry'), () => z
      .union([
        z.literal(false),
        z.object({
          tracerProvider: z.custom<TracerProvider>((v) => typeof (v as TracerProvider | undefined)?.getTracer === 'function', 'expected an OpenTelemetry TracerProvider').optional(),
          meterProvider: z.custom<MeterProvider>((v) => typeof (v as MeterProvider | undefined)?.getMeter === 'function', 'expected an OpenTelemetry MeterProvider').optional(),
        }).strict(),
      ])
      .optional()),
    /** Retention (docs/data.md): finished runs older than `maxAge` (default 30 days) are
     *  removed with their journal, `batchSize` runs per transaction, swept every `sweepEvery`
     *  (default 10 minutes). On Restate the same age is the workflows' retention. */
    retention: section(given('retention'), () => z
      .object({ maxAge: durationField().optional(), batchSize: z.number().int().min(1).max(10_000).optional(), sweepEvery: durationField().optional() })
      .strict()
      .optional()),
    /** Payload encryption at rest (docs/data.md): keys from `keyFile` (owner-only) or the env
     *  var `keyEnv` (default TRANQUIL_KEYS; TRANQUIL_KEY_FILE names a file). Off when none is set. */
    encryption: section(given('encryption'), () => z.object({ keyFile: z.string().min(1).optional(), keyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional() }).strict().optional()),
    restate: section(given('restate'), () => z
      .object({
        ingressUrl: z.string().url().optional(),
        adminUrl: z.string().url().optional(),
        /** Request identity keys of an external Restate (a cluster: one per signing key in
         *  use; every node must sign with one of them); the endpoint then serves only them. */
        identityKeys: z.array(z.string().regex(/^publickeyv1_[1-9A-HJ-NP-Za-km-z]+$/, 'expected publickeyv1_<base58>')).min(1).optional(),
        /** The SDK endpoint Restate calls (docs/restate.md, "Moving to a cluster"). */
        endpoint: endpointSchema().optional(),
        /** Where the event inbox, schedules and webhook secrets live: 'local' (the data dir's
         *  file, default) or 'restate' (shared by every replica; docs/restate.md). */
        triggers: z.enum(['local', 'restate']).default('local'),
        /** Step events logged in Restate, so a subscriber on any replica (or the CLI) follows
         *  a run another process executes (docs/live-output.md). Costs every Restate step
         *  (about half the steps/s, measured): default on only where there are other
         *  processes to serve, with `triggers: 'restate'` or an external `ingressUrl`. */
        liveAcrossReplicas: z.boolean().optional(),
        /** How often, while the engine runs, this app's deployments of earlier code that no
         *  live run is pinned to any more are removed (default 10 minutes; also at start). */
        deploymentSweep: durationField().optional(),
        /** Where the embedded restate-server exports its own invocation spans (OTLP; its
         *  `tracing-endpoint`): `otlp+http://host:4318/v1/traces` (OTLP/HTTP) or
         *  `http://host:4317` (OTLP/gRPC). They join the runs' traces (docs/observability.md).
         *  Default: the server's RESTATE_TRACING_ENDPOINT, inherited from the environment. */
        tracingEndpoint: z
          .string()
          .regex(/^(otlp\+)?https?:\/\/[^\s/]+(\/\S*)?$/, 'expected an OTLP endpoint: otlp+http://host:port/v1/traces (OTLP/HTTP) or http://host:port (OTLP/gRPC)')
          .optional(),
      })
      .strict()
      .superRefine((r, c) => {
        // Only the embedded server is configured by the engine: an external cluster's nodes
        // take `tracing-endpoint` in their own configuration.
        if (r.ingressUrl && r.tracingEndpoint) {
          c.addIssue({ code: 'custom', path: ['tracingEndpoint'], message: "configures the embedded restate-server only: with ingressUrl (an external cluster) set tracing-endpoint in each node's configuration" });
        }
        // The embedded server signs with its own key; an external one must name its keys
        // before the endpoint is reachable from other hosts.
        if (r.ingressUrl && r.endpoint && !isLoopback(r.endpoint.host) && !r.identityKeys?.length) {
          c.addIssue({ code: 'custom', path: ['identityKeys'], message: `required when endpoint.host is ${r.endpoint.host} (not loopback): without them anyone who reaches the port could invoke workflow handlers` });
        }
      })
      .optional()),
  })
  .strict();

/**
 * createEngine's config; every field is optional. The ones most apps set: `dataDir` (default
 * `.tranquil`, the SQLite journal's directory), `workflows` (definitions from workflow()),
 * `backend` (`'sqlite'`, the default, or `'restate'`; env TRANQUIL_BACKEND when absent).
 * Others: `workflowFiles` and `plainWorkflows` (paths), `actions`, `durability`,
 * `maxConcurrentRuns` (default 1000), `maxPayloadBytes` (default 16 MiB), `cancelGrace`,
 * `webhook`, `log`, `retention`, `encryption`, `control`, `deno`, `restate`. An unknown or
 * bad field is a ValidationError naming it.
 */
export type EngineConfig = z.input<ReturnType<typeof configSchema>>;
export type ResolvedConfig = z.output<ReturnType<typeof configSchema>> & { backend: 'sqlite' | 'restate' };

export function resolveConfig(input: unknown, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const given = (key: string) => {
    if (typeof input !== 'object' || input === null) return false;
    try {
      return (input as Record<string, unknown>)[key] !== undefined;
    } catch {
      return true; // a key that throws when read (a proxy, a getter): the parse below says so
    }
  };
  const data = parseOrThrow(configSchema(given), input ?? {}, 'engine config');
  const fromEnv = env.TRANQUIL_BACKEND;
  if (fromEnv !== undefined && fromEnv !== 'sqlite' && fromEnv !== 'restate') {
    throw new ValidationError(`TRANQUIL_BACKEND: expected 'sqlite' or 'restate', got '${fromEnv}'`);
  }
  const backend = data.backend ?? fromEnv ?? 'sqlite';
  if (backend === 'restate' && data.maxPayloadBytes > MAX_PAYLOAD_ON_RESTATE) {
    throw new ValidationError(`engine config.maxPayloadBytes: at most 30 MiB (${MAX_PAYLOAD_ON_RESTATE}) on backend 'restate', whose messages are limited to 32 MiB`);
  }
  return { ...data, backend };
}

/** Whether this engine logs its runs' step events in Restate (restate.liveAcrossReplicas and
 *  its default), as the engine and the CLI both read it. */
export function stepEventLogOn(restate: { liveAcrossReplicas?: boolean; triggers?: string; ingressUrl?: string } | undefined): boolean {
  return restate?.liveAcrossReplicas ?? (restate?.triggers === 'restate' || restate?.ingressUrl !== undefined);
}
