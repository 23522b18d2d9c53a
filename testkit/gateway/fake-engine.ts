// A container engine's API on a unix socket, answering by hand (no engine runs): exec create answers
// an id, exec inspect an exit code of 7, and exec start whatever the test gives, so that the Docker
// backend's own reading of the start answer (gateway/src/backends/docker.ts) meets exactly those bytes.
// The stream format is the Docker Engine API's (docs.docker.com/reference/api/engine/version/v1.41/
// #tag/Container/operation/ContainerAttach, "Stream format"): an 8-byte header (the stream, 1 stdout or
// 2 stderr, then three zero bytes and the payload's length as a big-endian uint32) before each payload.
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One frame of Docker's multiplexed stream (no TTY): header and payload. */
export function dockerFrame(stream: number, payload: string): Buffer {
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(Buffer.byteLength(payload), 4);
  return Buffer.concat([header, Buffer.from(payload)]);
}

/** An engine on a unix socket: exec create answers an id; exec start answers `start` (head, stream and all, in one write). */
export async function fakeEngine(start: string) {
  const dir = mkdtempSync(join(tmpdir(), "entryway-engine-"));
  const path = join(dir, "engine.sock");
  const server = net.createServer((socket) => {
    let request = "";
    socket.on("data", (data: Buffer) => {
      request += data.toString("latin1");
      const body = /\r\n\r\n([\s\S]*)$/.exec(request)?.[1];
      const length = Number(/content-length: (\d+)/i.exec(request)?.[1] ?? 0);
      if (body === undefined || body.length < length) return;
      const json = (status: string, value: unknown) => {
        const text = JSON.stringify(value);
        return `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
      };
      if (request.startsWith("POST /v1.41/containers/")) socket.end(json("201 Created", { Id: "e1234" }));
      else if (request.startsWith("GET /v1.41/exec/e1234/json"))
        socket.end(json("200 OK", { Running: false, ExitCode: 7 }));
      else socket.end(start);
      request = "";
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    url: `unix://${path}`,
    stop: () =>
      new Promise<void>((resolve) => server.close(() => (rmSync(dir, { recursive: true, force: true }), resolve()))),
  };
}
