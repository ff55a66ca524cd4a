// A workflow file's permission declaration (issue 11; docs/runner.md, Declaring
// permissions): the zod schema of `workflow(name, { permissions }, ...)`. Pure and free of
// node: imports, because the sdk loads it in every Deno run child (a node: import costs a
// child the Node compatibility layer at start). The Deno flags computed from a declaration
// are in permissions.ts.
import * as z from 'zod';
import { once } from './once.ts';

/** Deno joins a flag's values with commas: an entry holding one would widen the grant. */
const entry = (what: string) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(1024)
    .refine((s) => !s.includes(','), `${what} must not contain ','`)
    .refine((s) => !/[\0\n\r]/.test(s), `${what} must not contain control characters`);

/** host, host:port, [ipv6]:port; no scheme, no path, no wildcard. */
const netHost = () => entry('a net host').refine((s) => /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(s), 'a net host is host or host:port (no scheme, no path, no wildcard)');
const envName = () => entry('an env name').refine((s) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s), 'an env name is letters, digits and _ (no wildcard)');

// Built on first use (once): every engine imports this through the sdk, few declare permissions.
export const permissionsSchema = once(() => z
  .object({
    net: z.array(netHost()).max(256).optional(),
    read: z.array(entry('a read path')).max(256).optional(),
    write: z.array(entry('a write path')).max(256).optional(),
    env: z.array(envName()).max(256).optional(),
  })
  .strict());

/** What a workflow file's Deno child may do (docs/runner.md): `net` hosts (host or
 *  host:port), `read` and `write` paths (relative to the file's directory), `env` names. */
export type Permissions = z.infer<ReturnType<typeof permissionsSchema>>;
