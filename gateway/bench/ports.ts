// Loopback ports for the benchmarks' own servers (gateway/bench/bench.ts on podman,
// scripts/bench-exec-node.ts on the real node).
import net, { type AddressInfo } from "node:net";
import { sleep } from "./measure.js";

/** A TCP port on 127.0.0.1 that nothing listened on a moment ago (the kernel's choice for port 0). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** Whether something accepts connections on 127.0.0.1:`port` now. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => resolve(!!socket.end()));
    socket.on("error", () => resolve(false));
  });
}

/** Waits (up to 10 s) until `process` listens on `port`; throws if it exits first. */
export async function waitForPort(port: number, process: { exitCode: number | null }): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (process.exitCode !== null) throw new Error("the process exited before listening");
    if (await portOpen(port)) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on ${port}`);
}
