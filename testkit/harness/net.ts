// Loopback ports for tests that start servers of their own (nothing listens beyond 127.0.0.1).
import net from "node:net";

/** A TCP port free on 127.0.0.1 at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Waits until 127.0.0.1:port accepts a connection; `alive` says whether the server is still worth waiting for. */
export async function waitForPort(
  port: number,
  name: string,
  alive: () => Promise<boolean> | boolean = () => true,
  attempts = 300,
): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    if (!(await alive())) throw new Error(`${name} stopped before it listened on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not listen on 127.0.0.1:${port}`);
}
