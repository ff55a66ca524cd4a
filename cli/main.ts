// The `tranquil` entry: runs the CLI program (cli/program.ts, importable in-process by
// tests) on process.argv, then exits.
import { main } from './program.ts';

await main(process.argv);
// Exit explicitly: a step body abandoned by an in-process engine must not keep the CLI alive.
// But first let stdout/stderr drain: to a pipe they are written asynchronously, and exiting
// at once cut `runs describe --json` at 64 KiB (issue 36).
const drained = (s: NodeJS.WriteStream) => new Promise<void>((resolve) => (s.writableLength === 0 ? resolve() : s.write('', () => resolve())));
await Promise.race([Promise.all([drained(process.stdout), drained(process.stderr)]), new Promise((r) => setTimeout(r, 10_000).unref())]);
process.exit(process.exitCode ?? 0);
