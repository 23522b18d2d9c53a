// Docker Engine API (also served by podman): exec create, exec start with a hijacked stream
// (HTTP upgrade), exec resize, exec inspect for the exit code. Entry's original backend.
import { readFileSync } from "node:fs";
import http from "node:http";
import net, { type Socket } from "node:net";
import { join } from "node:path";
import type { Target } from "../target.js";
import {
  DeniedError,
  NotFoundError,
  type Backend,
  type ExecControl,
  type ExecHandlers,
  type OutputStream,
  type ResolvedTarget,
} from "./backend.js";

const API = "/v1.41";

interface Endpoint {
  socketPath?: string;
  host?: string;
  port?: number;
}

function parseDockerHost(dockerHost: string): Endpoint {
  const url = new URL(dockerHost);
  if (url.protocol === "unix:") return { socketPath: url.pathname };
  if (url.protocol === "tcp:" || url.protocol === "http:")
    return { host: url.hostname, port: Number(url.port || 2375) };
  throw new Error(`unsupported dockerHost ${dockerHost}: use unix:///path or tcp://host:port`);
}

const FRAME_HEADER_BYTES = 8;

/**
 * Splits the stream of an exec started without a TTY back into stdout and stderr. The Engine API
 * multiplexes it as frames of an 8-byte header [STREAM_TYPE, 0, 0, 0, SIZE1..SIZE4] (1 stdout,
 * 2 stderr, size big-endian) and the payload: "Stream format" in
 * https://docs.docker.com/reference/api/engine/version/v1.41/#tag/Container/operation/ContainerAttach
 * and moby's client/container_attach.go. Frames arrive cut anywhere: a payload is passed on in the
 * pieces it arrives in (views of the chunk, nothing copied); only a cut header is held (8 bytes).
 */
export class StreamDemuxer {
  private readonly header = Buffer.alloc(FRAME_HEADER_BYTES);
  private headerBytes = 0;
  /** Payload bytes of the current frame still to come, and its stream. */
  private remaining = 0;
  private stream: OutputStream = "stdout";

  constructor(private readonly emit: (chunk: Buffer, stream: OutputStream) => void) {}

  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - offset);
        this.remaining -= take;
        this.emit(chunk.subarray(offset, offset + take), this.stream);
        offset += take;
        continue;
      }
      const take = Math.min(FRAME_HEADER_BYTES - this.headerBytes, chunk.length - offset);
      chunk.copy(this.header, this.headerBytes, offset, offset + take);
      this.headerBytes += take;
      offset += take;
      if (this.headerBytes < FRAME_HEADER_BYTES) return;
      this.headerBytes = 0;
      this.stream = this.header[0] === 2 ? "stderr" : "stdout";
      this.remaining = this.header.readUInt32BE(4);
    }
  }
}

/**
 * The buffer every exec stream of this process is read into (net.Socket's onread option): a chunk
 * is consumed, or copied where it is kept, before the next read, so reading allocates nothing (a
 * buffer per read was, with the frames, most of the gateway's garbage-collection time on bulk output).
 */
const READ_BUFFER = Buffer.allocUnsafeSlow(64 * 1024);

/** Longest response head taken from the engine before the stream begins. */
const MAX_HEAD_BYTES = 16 * 1024;

class DockerApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Where a container's runtime mounts files of its own making: their source paths name the container. */
const RUNTIME_MOUNTS = ["/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/run/.containerenv"];
const CONTAINER_ID = /(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/g;

/**
 * The ids of the container this process runs in, from what `procSelf` (/proc/self) says: the
 * source paths of the files the runtime mounts into every container it makes (Docker's
 * /var/lib/docker/containers/<id>/hostname, podman's .../overlay-containers/<id>/userdata/hostname,
 * the fourth field of mountinfo: proc(5)), and the cgroup path (cgroup v1 and a host cgroup
 * namespace: /docker/<id>, /libpod-<id>.scope). Empty outside a container, or where the runtime
 * hides both. Read once: a process does not change containers.
 */
export function ownContainerIds(procSelf = "/proc/self"): Set<string> {
  const read = (file: string) => {
    try {
      return readFileSync(join(procSelf, file), "utf8");
    } catch {
      return "";
    }
  };
  const roots = read("mountinfo")
    .split("\n")
    .map((line) => line.split(" "))
    .filter((fields) => RUNTIME_MOUNTS.includes(fields[4] ?? ""))
    .map((fields) => fields[3] ?? "");
  return new Set([...roots, read("cgroup")].flatMap((text) => text.match(CONTAINER_ID) ?? []));
}

/**
 * `ownContainer`: the ids of the gateway's own container (default: ownContainerIds()), which it
 * never enters, as the Kubernetes backend never enters its own namespace: its processes hold the
 * gateway's configuration and secrets.
 */
export function dockerBackend(dockerHost: string, options: { ownContainer?: Set<string> } = {}): Backend {
  const endpoint = parseDockerHost(dockerHost);
  const own = options.ownContainer ?? ownContainerIds();

  function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const request = http.request(
        { ...endpoint, method, path: API + path, headers: payload ? { "content-type": "application/json" } : {} },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = response.statusCode ?? 0;
            if (status >= 300) {
              let message = text;
              try {
                message = (JSON.parse(text) as { message?: string }).message ?? text;
              } catch {
                // not JSON: keep the raw text
              }
              reject(new DockerApiError(status, `Docker API ${method} ${path}: ${status} ${message.trim()}`));
              return;
            }
            resolve((text ? JSON.parse(text) : undefined) as T);
          });
          response.on("error", reject);
        },
      );
      // Generous: an engine serializes execs per container, so under load a create can wait its turn.
      request.setTimeout(60_000, () => request.destroy(new Error(`Docker API ${method} ${path}: timeout`)));
      request.on("error", reject);
      request.end(payload);
    });
  }

  /**
   * POST /exec/{id}/start with an upgrade: the connection becomes the raw exec stream, whose bytes go
   * to `onData` (valid only during the call). Written and read here rather than through node:http,
   * so that the socket reads into READ_BUFFER from the start. The engine answers 101 and the stream
   * follows the response head at once, possibly in the same read (moby's and podman's hijack
   * header: libpod/api/handlers/compat/exec.go, writeHijackHeader).
   */
  function startExec(execId: string, tty: boolean, onData: (chunk: Buffer) => void): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const body = JSON.stringify({ Detach: false, Tty: tty });
      let head: Buffer | null = Buffer.alloc(0); // the response head while it is incomplete; null once the stream runs
      const fail = (error: Error) => {
        head = null;
        socket.destroy();
        reject(error);
      };
      const socket = net.connect({
        ...(endpoint.socketPath ? { path: endpoint.socketPath } : { host: endpoint.host!, port: endpoint.port! }),
        onread: {
          buffer: READ_BUFFER,
          // Returns true: go on reading (pausing is the socket's pause()).
          callback: (bytes: number, buffer: Uint8Array): boolean => {
            const chunk = Buffer.from(buffer.buffer, buffer.byteOffset, bytes);
            if (head === null) {
              onData(chunk);
              return true;
            }
            head = Buffer.concat([head, chunk]);
            const end = head.indexOf("\r\n\r\n");
            if (end < 0) {
              if (head.length > MAX_HEAD_BYTES) fail(new Error("Docker API exec start: no end to the response head"));
              return true;
            }
            const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.toString("latin1", 0, Math.min(end, 64)))?.[1];
            if (status !== "101") {
              fail(new Error(`Docker API exec start: HTTP ${status ?? "(unreadable)"} instead of an upgrade`));
              return true;
            }
            const rest = head.subarray(end + 4);
            head = null;
            resolve(socket);
            if (rest.length > 0) onData(rest);
            return true;
          },
        },
      });
      socket.once("connect", () =>
        socket.write(
          `POST ${API}/exec/${execId}/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n${body}`,
        ),
      );
      socket.once("error", (error) => head !== null && fail(error));
      socket.once(
        "end",
        () => head !== null && fail(new Error("Docker API exec start: the engine closed the connection")),
      );
    });
  }

  async function exitCodeOf(execId: string): Promise<number | null> {
    // The stream can end a moment before the engine records the exit: ask for up to 3 s.
    for (let attempt = 0; attempt < 60; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 50));
      const info = await call<{ Running: boolean; ExitCode: number | null }>("GET", `/exec/${execId}/json`);
      if (!info.Running) return info.ExitCode ?? null;
    }
    return null; // still running: the stream was dropped, not ended
  }

  async function createExec(container: string, command: string[], tty: boolean, stdin: boolean): Promise<string> {
    const { Id } = await call<{ Id: string }>("POST", `/containers/${encodeURIComponent(container)}/exec`, {
      AttachStdin: stdin,
      AttachStdout: true,
      AttachStderr: true,
      Tty: tty,
      Cmd: command,
    });
    return Id;
  }

  return {
    name: "docker",

    async resolve(target: Target): Promise<ResolvedTarget> {
      if (target.kind !== "docker") throw new NotFoundError("the Docker backend takes a container name or id");
      try {
        const info = await call<{ Id: string; Name: string; State: { Running: boolean } }>(
          "GET",
          `/containers/${encodeURIComponent(target.container)}/json`,
        );
        // The engine takes a full id, an exact name, or else any unique id prefix (moby
        // daemon/container.go GetContainer): "fe16" would open the container whose id starts with
        // fe16 for a user authorized only for a container named fe16. Only what was named counts.
        const name = info.Name.replace(/^\//, "");
        if (target.container !== name && target.container !== info.Id)
          throw new NotFoundError(`no container named ${target.container} (give a name, or an id in full)`);
        if (own.has(info.Id)) throw new DeniedError(`permission denied: container ${name} is the gateway's own`);
        if (!info.State.Running) throw new NotFoundError(`container ${target.container} is not running`);
        return { container: info.Id, label: `docker/${name}` };
      } catch (error) {
        if (error instanceof DockerApiError && error.status === 404)
          throw new NotFoundError(`no container ${target.container}`);
        throw error;
      }
    },

    async exec(target, command, size, handlers: ExecHandlers, { tty } = { tty: true }): Promise<ExecControl> {
      const execId = await createExec(target.container, command, tty, true);
      const demuxer = tty ? null : new StreamDemuxer((chunk, which) => handlers.onOutput(chunk, which));
      const stream = await startExec(
        execId,
        tty,
        demuxer ? (chunk) => demuxer.push(chunk) : (chunk) => handlers.onOutput(chunk, "stdout"),
      );
      let ended = false;
      const end = (error?: string) => {
        if (ended) return;
        ended = true;
        exitCodeOf(execId).then(
          (exitCode) => handlers.onEnd(error ? { exitCode, error } : { exitCode }),
          (inspectError: Error) => handlers.onEnd({ exitCode: null, error: error ?? inspectError.message }),
        );
      };
      stream.on("end", () => end());
      stream.on("close", () => end());
      stream.on("error", (error) => end(error.message));
      // One resize at a time, in the order asked: two calls in flight may be applied by the engine
      // in either order, and the session's size at connect, still in flight, overwrote the
      // client's first WINCH on a loaded machine (stty size said the old size).
      let resizing = Promise.resolve();
      const resize = (cols: number, rows: number) =>
        (resizing = resizing.then(() =>
          call("POST", `/exec/${execId}/resize?h=${rows}&w=${cols}`).then(
            () => undefined,
            () => undefined, // a resize can race the end of the exec; nothing to do about it
          ),
        ));
      if (tty) void resize(size.cols, size.rows);
      return {
        write: (data, written) => void stream.write(data, written && (() => written())),
        // Half-closing the hijacked connection (shutdown of its write side) is the end of stdin for the
        // engine, as the docker CLI's HijackedResponse.CloseWrite does (moby client/hijack.go).
        closeStdin: () => void stream.end(),
        resize,
        pause: () => void stream.pause(),
        resume: () => void stream.resume(),
        close: () => stream.destroy(),
      };
    },

    async run(target, command, { signal } = {}) {
      signal?.throwIfAborted();
      const execId = await createExec(target.container, command, false, false);
      const stream = await startExec(execId, false, () => {}); // output is not needed, only the end
      const abort = () => stream.destroy();
      signal?.addEventListener("abort", abort, { once: true });
      try {
        await new Promise<void>((resolve) => {
          stream.on("close", resolve);
          stream.on("end", resolve);
          stream.on("error", () => resolve());
          if (signal?.aborted) stream.destroy();
        });
        signal?.throwIfAborted();
        return await exitCodeOf(execId);
      } finally {
        signal?.removeEventListener("abort", abort);
      }
    },

    async list() {
      // GET /containers/json lists the running containers (all=false, the engine's default).
      const containers = await call<{ Id: string; Names?: string[] }[]>("GET", "/containers/json");
      return containers
        .filter((container) => !own.has(container.Id) && container.Names?.[0])
        .map((container) => ({
          target: { kind: "docker" as const, container: container.Names![0]!.replace(/^\//, "") },
          containers: [],
        }));
    },

    async check() {
      await call("GET", "/version");
    },
  } satisfies Backend;
}
