// The engine's side of webhooks: decides whether a listener runs, on which port, which
// URL segment maps to which workflow, and how a delivery becomes a run. The HTTP itself
// is an adapter (WebhookListenerFactory) chosen in compose/.
//
// The same deliveries can be mounted in the host app's own router instead (handle(): a fetch
// Request in, a Response out; the adapter shares its checks with the listener), and
// `listen: false` then keeps the engine's own port closed.
//
// Port: a configured port is used as is. Port 0 first tries the port recorded in the
// data dir last time (so URLs handed out stay valid across restarts), then any free port.
import { nodeCrypto } from './node-crypto.ts';
import { NotSupportedError, ValidationError } from '../domain/errors.ts';
import { hookRunId } from '../domain/ids.ts';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../domain/json.ts';
import type { DurableExecutor } from '../ports/executor.ts';
import type { RunTelemetry } from '../ports/telemetry.ts';
import { tracedStart } from './traced-start.ts';
import { debounceKeyOf } from '../../sdk/debounce.ts';
import { debouncedDelivery } from './debounce.ts';
import type { TriggerState } from '../ports/triggers.ts';
import type { RunningListener, WebhookFetch, WebhookFetchFactory, WebhookHandler, WebhookListenerFactory, WebhookTarget } from '../ports/webhook-listener.ts';
import type { WorkflowRegistry } from './registry.ts';
import { runValidator } from './webhook-validate.ts';

export interface WebhookConfig {
  host?: string;
  port?: number;
  /** Largest accepted body; default 1 MiB. */
  bodyLimitBytes?: number;
  /** false: no listener of the engine's own; deliveries come through handle(). Default true. */
  listen?: boolean;
}

/** The HTTP adapters, chosen in compose/: the listener, and the fetch handler for handle(). */
export interface WebhookAdapters {
  listen: WebhookListenerFactory;
  fetch?: WebhookFetchFactory;
}

const DEFAULT_BODY_LIMIT = 1024 * 1024;

export class WebhookHost {
  private listener: RunningListener | undefined;
  private readonly secrets = new Map<string, string>();
  private readonly targets = new Map<string, WebhookTarget>();
  private readonly handler: WebhookHandler;
  private readonly bodyLimitBytes: number;
  private fetch: Promise<WebhookFetch> | undefined;
  /** Between start() and stop(): handle() answers 503 outside it. */
  private open = false;

  constructor(
    private readonly registry: WorkflowRegistry,
    private readonly executor: DurableExecutor,
    private readonly state: () => TriggerState,
    private readonly adapters: WebhookAdapters,
    private readonly config: WebhookConfig | undefined,
    /** The engine's payload limit: a body over it could not become a run's input anyway. */
    private readonly maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES,
    private readonly telemetry?: RunTelemetry,
  ) {
    // Workflow names first; a trigger's `path` is an alias unless it would shadow a name.
    const withHooks = registry.all().filter((w) => w.definition.triggers.some((t) => t.type === 'webhook'));
    for (const w of withHooks) this.targets.set(w.definition.name, this.target(w.definition.name));
    for (const w of withHooks) {
      for (const t of w.definition.triggers) {
        if (t.type === 'webhook' && !this.targets.has(t.path)) this.targets.set(t.path, this.target(w.definition.name));
      }
    }
    this.bodyLimitBytes = Math.min(config?.bodyLimitBytes ?? DEFAULT_BODY_LIMIT, maxPayloadBytes);
    this.handler = {
      resolve: (segment: string) => this.targets.get(segment),
      secretFor: (workflow: string) => this.secret(workflow),
      startRun: (workflow: string, input: never, key: string | undefined, parent: string | undefined) => {
        const debounce = this.registry.get(workflow).definition.debounce;
        if (debounce) return debouncedDelivery(this.executor, workflow, debounce, input, key, () => nodeCrypto().randomUUID(), parent);
        const runId = key === undefined ? nodeCrypto().randomUUID() : hookRunId(workflow, key);
        return tracedStart(this.telemetry, 'start', workflow, runId, parent, (traceparent) => this.executor.startRun({ workflow, input, runId, traceparent }), (r) => r.created);
      },
    };
  }

  /** The listener runs when a workflow has a webhook trigger or config.webhook is set. */
  get wanted(): boolean {
    return this.config !== undefined || this.targets.size > 0;
  }

  get address(): { host: string; port: number } | undefined {
    return this.listener && { host: this.listener.host, port: this.listener.port };
  }

  async start(): Promise<void> {
    this.open = true;
    if (!this.wanted || this.listener || this.config?.listen === false) return;
    const state = this.state();
    const host = this.config?.host ?? '127.0.0.1';
    const fixed = this.config?.port ?? 0;
    const recorded = fixed === 0 ? await state.webhookPort() : undefined;
    const options = { host, bodyLimitBytes: this.bodyLimitBytes };
    const handler = this.handler;
    // A listener that cannot start is the webhook config's problem (host, port) to the
    // caller of engine.start(): a ValidationError naming where, never a bare Error.
    const cannotListen = (port: number, err: unknown) =>
      new ValidationError(`webhook listener: cannot listen on ${host}:${port}: ${(err as Error)?.message ?? String(err)}`);
    try {
      this.listener = await this.adapters.listen({ ...options, port: fixed || recorded || 0 }, handler);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (fixed !== 0 || recorded === undefined || code !== 'EADDRINUSE') throw cannotListen(fixed || recorded || 0, err);
      // The recorded port is taken by someone else now: any free port (URLs change).
      try {
        this.listener = await this.adapters.listen({ ...options, port: 0 }, handler);
      } catch (err2) {
        throw cannotListen(0, err2);
      }
    }
    await state.saveWebhookPort(this.listener.port);
  }

  async stop(): Promise<void> {
    this.open = false;
    const l = this.listener;
    this.listener = undefined;
    await l?.close();
  }

  /** One delivery mounted in the host's router: the listener's checks and answers. */
  async handle(request: Request): Promise<Response> {
    if (!this.open) return Response.json({ error: 'the engine is not running' }, { status: 503 });
    if (!this.adapters.fetch) throw new NotSupportedError('this engine was built without a webhook handler');
    this.fetch ??= this.adapters.fetch({ bodyLimitBytes: this.bodyLimitBytes }, this.handler);
    return (await this.fetch)(request);
  }

  /** The listener's URL, or with `base` (where the host mounted handle()) `<base>/<workflow>/<secret>`. */
  async url(workflow: string, base?: string): Promise<string> {
    const def = this.registry.get(workflow).definition;
    if (!def.triggers.some((t) => t.type === 'webhook')) throw new ValidationError(`workflow '${workflow}' has no webhook() trigger`);
    if (base !== undefined) return `${base.replace(/\/+$/, '')}/${workflow}/${await this.secret(workflow)}`;
    if (this.config?.listen === false) {
      throw new ValidationError(`webhook.listen is false: pass webhookUrl('${workflow}', { base }) with where your app mounts engine.handleWebhook`);
    }
    if (!this.listener) throw new ValidationError('webhook listener is not running (call engine.start() first)');
    const h = this.listener.host;
    const host = h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h;
    return `http://${host}:${this.listener.port}/hooks/${workflow}/${await this.secret(workflow)}`;
  }

  private async secret(workflow: string): Promise<string> {
    let s = this.secrets.get(workflow);
    if (s === undefined) this.secrets.set(workflow, (s = await this.state().webhookSecret(workflow)));
    return s;
  }

  private target(workflow: string): WebhookTarget {
    const trigger = this.registry.get(workflow).definition.triggers.find((t) => t.type === 'webhook');
    const validate = trigger?.type === 'webhook' ? trigger.validate : undefined;
    const def = this.registry.get(workflow).definition;
    const input = def.schemas?.input;
    return {
      workflow,
      validate: async (body) => {
        const v = await runValidator(validate, body);
        if (v.ok && def.debounce) {
          // The burst key: a key function that throws or returns no string is a 400, nothing stored.
          try {
            debounceKeyOf(workflow, def.debounce, v.body);
          } catch (err) {
            return { ok: false, reason: (err as Error).message };
          }
        }
        if (!v.ok || !input) return v;
        // The workflow's input schema too: a body it refuses is a 400, nothing stored.
        const s = await runValidator(input, v.body);
        return s.ok ? s : { ok: false, reason: `workflow '${workflow}' input: ${s.reason}` };
      },
    };
  }
}
