// Run ids. Ids derived from a cause (event id, schedule slot) are deterministic, so the
// backend's own "run id already exists" check is the dedup on every backend.
/** FNV-1a based 128-bit-ish hex digest: pure and portable (no node:crypto in the domain). */
export function stableHash(text: string): string {
  let out = '';
  for (const seed of [0x811c9dc5, 0x01000193, 0x9e3779b9, 0x85ebca6b]) {
    let h = seed >>> 0;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    out += h.toString(16).padStart(8, '0');
  }
  return out;
}

export function eventRunId(eventId: string, workflow: string): string {
  return `evt-${stableHash(`${eventId}\u0000${workflow}`).slice(0, 24)}`;
}

export function slotRunId(workflow: string, slotIso: string): string {
  return `cron-${workflow}-${slotIso.replace(/[^0-9TZ]/g, '')}`;
}

/** A webhook delivery with an Idempotency-Key: the same key for the same workflow = the same run. */
export function hookRunId(workflow: string, idempotencyKey: string): string {
  return `hook-${stableHash(`${workflow}\u0000${idempotencyKey}`).slice(0, 24)}`;
}
