// A unix-socket proxy in front of a container engine's API socket, for tests that count what the
// gateway asks of the engine: the HTTP requests that went through it (by their request line) and the
// most connections open at once.
import { rmSync } from "node:fs";
import net from "node:net";

export interface EngineProxy {
  /** The proxy's socket: give it to dockerBackend as unix://<path>. */
  path: string;
  /** Requests so far whose "<METHOD> <path>" matches. */
  requests(pattern: RegExp): number;
  /** The most connections that were open to the engine at once. */
  readonly maxOpen: number;
  stop(): Promise<void>;
}

export async function startEngineProxy(upstream: string, path: string): Promise<EngineProxy> {
  const lines: string[] = [];
  const sockets = new Set<net.Socket>();
  let open = 0;
  let maxOpen = 0;
  const server = net.createServer((client) => {
    const engine = net.connect(upstream);
    open++;
    maxOpen = Math.max(maxOpen, open);
    engine.once("close", () => open--);
    for (const socket of [client, engine]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
    }
    // Requests are written whole and small, so a request line does not straddle two chunks.
    client.on("data", (chunk: Buffer) => {
      for (const [, line] of chunk
        .toString("latin1")
        .matchAll(/(?:^|\r\n)((?:GET|POST|PUT|DELETE|HEAD) \S+) HTTP\/1\.1\r\n/g))
        lines.push(line!);
    });
    client.pipe(engine).pipe(client);
    client.on("close", () => engine.destroy());
    engine.on("close", () => client.destroy());
  });
  rmSync(path, { force: true });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    path,
    requests: (pattern) => lines.filter((line) => pattern.test(line)).length,
    get maxOpen() {
      return maxOpen;
    },
    stop: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
