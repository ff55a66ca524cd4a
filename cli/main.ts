// The `tranquil` entry: runs the CLI program (cli/program.ts, importable in-process by
// tests) on process.argv, then exits.
import { main } from './program.ts';

await main(process.argv);
// Exit explicitly: a step body abandoned by an in-process engine must not keep the CLI alive.
process.exit(process.exitCode ?? 0);
