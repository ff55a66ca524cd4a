// "The data dir's SQLite file was written": what a reader in another process (the CLI
// following a stream or waiting for a key) waits on instead of reading the run again every
// 200 ms. Every commit writes the file's WAL (or the file), which the OS reports (inotify);
// nothing is read until that happens, so an idle follower costs nothing.
import { watch } from 'node:fs';
import { DB_FILE } from './store.ts';

/** Calls `wake` on each change to the data dir's database files; returns the stop function
 *  (a dir the OS cannot watch is never woken: the caller's poll is all there is then). */
export function fileChanges(dataDir: string): (wake: () => void) => () => void {
  return (wake) => {
    try {
      const w = watch(dataDir, { persistent: false }, (_type, file) => {
        if (file === null || String(file).startsWith(DB_FILE)) wake();
      });
      w.on('error', () => w.close());
      return () => w.close();
    } catch {
      return () => {};
    }
  };
}
