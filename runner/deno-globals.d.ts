// The few Deno APIs the runner uses, declared for the project's tsc (which checks runner/
// with Node's types); Deno itself checks nothing at run time (`deno run` does not type-check).
declare namespace Deno {
  interface Conn {
    read(p: Uint8Array): Promise<number | null>;
    write(p: Uint8Array): Promise<number>;
    close(): void;
    closeWrite(): Promise<void>;
    setNoDelay(noDelay?: boolean): void;
  }
  function connect(o: { hostname: string; port: number; transport?: 'tcp' }): Promise<Conn>;
  const args: string[];
  const env: { get(key: string): string | undefined; delete(key: string): void };
  function exit(code?: number): never;
  function unrefTimer(id: number): void;
  const version: { deno: string };
  const stdin: { readonly readable: AsyncIterable<Uint8Array> };
}
