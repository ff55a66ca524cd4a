// File URLs as Deno turns them into paths. Deno (Rust's url crate) decodes escapes leniently:
// a '%' that starts no escape stays as it is, so `./odd%.ts` names odd%.ts and, given the path
// /d/%/x.ts, Deno reports file:///d/%/x.ts. Node's fileURLToPath and decodeURIComponent throw
// on both. The module-graph check must name the file Deno will load, so it decodes the same way.

/** Decodes each run of valid escapes; a '%' starting no escape stays. Undefined when a run is
 *  not UTF-8 (Deno would name a non-UTF-8 file; the caller refuses rather than guess). */
export function decodeLenient(s: string): string | undefined {
  let bad = false;
  const out = s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      bad = true;
      return run;
    }
  });
  return bad ? undefined : out;
}

/** The local path of a file: URL as Deno reads it, or undefined (not a local file, not UTF-8). */
export function pathOfFileUrl(url: URL): string | undefined {
  if (url.protocol !== 'file:' || (url.hostname !== '' && url.hostname !== 'localhost')) return undefined;
  const path = decodeLenient(url.pathname);
  return path === undefined || path.includes('\0') ? undefined : path;
}
