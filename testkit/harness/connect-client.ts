import net from "node:net";

/**
 * The status line a CONNECT gateway's port answers to a CONNECT for `target` (host:port), from a
 * client bound to `localAddress` (a node's address reached through its NodePort keeps the
 * client's address with externalTrafficPolicy Local).
 */
export function connectStatus(
  gateway: { host: string; port: number },
  target: string,
  localAddress: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ ...gateway, localAddress }, () =>
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`),
    );
    let received = "";
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer from ${localAddress}: ${received}`)));
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      if (received.includes("\r\n")) {
        resolve(received.slice(0, received.indexOf("\r\n")));
        socket.destroy();
      }
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`closed without a status line: ${JSON.stringify(received)}`)));
  });
}
