// The engine-owned webhook listener, and the same handling as a fetch handler for a host
// app's own router (engine.handleWebhook), as ports: the engine facade supplies what a request
// needs (target lookup, secret, validation, run start); an HTTP adapter serves it.
import type { Json } from '../domain/json.ts';

export interface WebhookTarget {
  workflow: string;
  /** Runs before any run is created; `ok: false` = 400 with the reason. */
  validate(body: Json): Promise<{ ok: true; body: Json } | { ok: false; reason: string }>;
}

export interface WebhookHandler {
  /** By workflow name (or the trigger's `path` alias); undefined = 404. */
  resolve(segment: string): WebhookTarget | undefined;
  secretFor(workflow: string): Promise<string>;
  /** `idempotencyKey` (the Idempotency-Key header) makes a redelivery return the first run. */
  startRun(workflow: string, body: Json, idempotencyKey: string | undefined, traceparent?: string): Promise<{ runId: string; created: boolean }>;
}

export interface WebhookFetchOptions {
  bodyLimitBytes: number;
}

export interface WebhookListenOptions extends WebhookFetchOptions {
  host: string;
  port: number;
}

export interface RunningListener {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

export type WebhookListenerFactory = (options: WebhookListenOptions, handler: WebhookHandler) => Promise<RunningListener>;

/** One delivery in, its answer out (fetch API): what engine.handleWebhook serves with. */
export type WebhookFetch = (request: Request) => Promise<Response>;

export type WebhookFetchFactory = (options: WebhookFetchOptions, handler: WebhookHandler) => Promise<WebhookFetch>;
