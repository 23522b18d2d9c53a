// The Kubernetes stand-in's kubelet side of pods/exec (part of testkit/gateway/kube-standin.ts, which STANDS IN
// FOR THE KUBERNETES API SERVER AND KUBELET): the exec WebSocket in the v5.channel.k8s.io and
// v4.channel.k8s.io subprotocols: byte 0 of each binary message is the channel (0 stdin, 1 stdout,
// 2 stderr, 3 status JSON, 4 resize JSON, 255 close-stream in v5; kubernetes
// staging/src/k8s.io/apimachinery/pkg/util/remotecommand/constants.go). Exec runs the requested
// command for real, in a real PTY (node-pty) when tty=true (plain pipes otherwise), on this machine.
// Like a kubelet with runc, closing the exec WebSocket does NOT end the process: that is the
// lingering-shell behaviour the gateway has to deal with.
//
// DISTROLESS PODS (`distroless: true`) have no /bin/sh: an exec into their containers fails as the
// kubelet reports a runtime's exec error that is not an exit code (kubernetes/kubernetes
// pkg/kubelet/cri/streaming/remotecommand/exec.go, ServeExec: apierrors.NewInternalError on the
// status channel, so no exit code), with the message containerd/runc give for a missing binary.
import { execFileSync, spawn as spawnChild } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import pty from "node-pty";
import type { WebSocket } from "ws";

/** What an exec needs of the stand-in around it. */
export interface ExecContext {
  /** The working and home directory of every command. */
  dir: string;
  /** Session leaders of the execs with stdin (a TTY, or pipe mode): the shells the gateway started. */
  shells: number[];
  /** Runs an action after a delay (the stand-in clears its timers when it stops). */
  later: (ms: number, action: () => void) => void;
  /**
   * The late runtime (StandinOptions.lateTerminalModesMs, as conmon is): a fresh terminal's modes,
   * written back `ms` after the process started, and its output held until then.
   */
  lateTerminalModes?: { ms: number; modes: string };
}

/** Live (non-zombie) processes on this machine in one of the given sessions: the shells and their children. */
export function processesInSessions(sessions: Set<number>): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after "(comm)": state ppid pgrp session ...
      const [state, , , session] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state !== "Z" && sessions.has(Number(session))) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** The modes of a fresh terminal as node-pty makes one (`stty -g`), for the late runtime. */
export async function freshTerminalModes(): Promise<string> {
  const terminal = pty.spawn("stty", ["-g"], { cols: 80, rows: 24, encoding: null });
  let output = "";
  terminal.onData((data) => void (output += String(data)));
  await new Promise((resolve) => terminal.onExit(resolve));
  return output.trim();
}

function sendStatus(ws: WebSocket, exitCode: number | null, signal?: number): void {
  const status =
    exitCode === 0
      ? { metadata: {}, status: "Success" }
      : {
          metadata: {},
          status: "Failure",
          message:
            exitCode === null
              ? `command terminated by signal ${signal}`
              : `command terminated with non-zero exit code: exit status ${exitCode}`,
          reason: exitCode === null ? "InternalError" : "NonZeroExitCode",
          details: exitCode === null ? {} : { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
        };
  if (ws.readyState === ws.OPEN) {
    ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status))]));
    ws.close(1000);
  }
}

/** A distroless container: the runtime cannot start the command, and the kubelet says so as an internal error. */
export function failExec(ws: WebSocket, file: string): void {
  const cause = `error executing command in container: failed to exec in container: failed to start exec: OCI runtime exec failed: exec failed: unable to start container process: exec: ${JSON.stringify(file)}: stat ${file}: no such file or directory: unknown`;
  const status = {
    metadata: {},
    status: "Failure",
    message: `Internal error occurred: ${cause}`,
    reason: "InternalError",
    details: { causes: [{ message: cause }] },
    code: 500,
  };
  ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status))]));
  ws.close(1000);
}

export function runExec(
  ws: WebSocket,
  command: string[],
  tty: boolean,
  stdin: boolean,
  record: (pid: number) => void,
  { dir, shells, later, lateTerminalModes }: ExecContext,
): void {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, TERM: "xterm", LANG: "C.UTF-8" };
  if (tty) {
    const [file, ...args] = command;
    // encoding null: raw bytes both ways, so nothing here repairs or breaks UTF-8 for the gateway.
    const proc = pty.spawn(file!, args, { cols: 80, rows: 24, cwd: dir, env, encoding: null });
    shells.push(proc.pid);
    // node-pty destroys its PTY socket 200 ms after the process exits, dropping output not read by
    // then (easily, under load). A kubelet never drops output: let the socket end by itself (EIO
    // after the last byte), at most 5 s later.
    const ptySocket = (
      proc as unknown as { _socket: { destroy(): void; once(event: string, listener: () => void): void } }
    )._socket;
    const destroyNow = ptySocket.destroy.bind(ptySocket);
    ptySocket.destroy = () => {
      const timer = setTimeout(destroyNow, 5000);
      ptySocket.once("close", () => clearTimeout(timer));
    };
    record(proc.pid);
    // The late runtime (lateTerminalModesMs): the modes read now, written back later, output held until then.
    let held: Buffer[] | null = null;
    if (lateTerminalModes) {
      const terminal = (proc as unknown as { ptsName: string }).ptsName;
      held = [];
      later(lateTerminalModes.ms, () => {
        try {
          execFileSync("stty", ["-F", terminal, lateTerminalModes.modes]);
        } catch {
          // the process already ended
        }
        const output = held!;
        held = null;
        for (const data of output) forward(data);
      });
    }
    // Output is forwarded only while the client is there; afterwards the process lingers, blocked on its TTY.
    // Flow control, as the kubelet's stream has: stop reading the PTY while the gateway is not reading.
    let pending = 0;
    let paused = false;
    proc.onData((data: string | Buffer) => (held ? void held.push(Buffer.from(data)) : forward(data)));
    function forward(data: string | Buffer): void {
      if (ws.readyState !== ws.OPEN) return;
      const frame = Buffer.concat([Buffer.from([1]), Buffer.from(data)]);
      pending += frame.length;
      ws.send(frame, () => {
        pending -= frame.length;
        if (paused && pending < 256 * 1024) {
          paused = false;
          proc.resume();
        }
      });
      if (!paused && pending > 1024 * 1024) {
        paused = true;
        proc.pause();
      }
    }
    // Exit comes after the PTY socket closed (see above), so all output was read: send the status
    // once it has also gone out, as the kubelet does.
    proc.onExit(({ exitCode, signal }) => {
      const finish = () =>
        pending > 0 ? void setTimeout(finish, 20) : sendStatus(ws, signal ? null : exitCode, signal);
      finish();
    });
    ws.on("message", (data: Buffer) => {
      const channel = data[0];
      const payload = data.subarray(1);
      if (channel === 0) proc.write(Buffer.from(payload));
      else if (channel === 4) {
        // Go's JSON decoding ignores case: the kubelet takes {"Width","Height"} and client-node's {"width","height"}.
        const size = Object.fromEntries(
          Object.entries(JSON.parse(payload.toString("utf8")) as Record<string, number>).map(([k, v]) => [
            k.toLowerCase(),
            v,
          ]),
        );
        try {
          if (size.width && size.height) proc.resize(size.width, size.height);
        } catch {
          // the process already ended
        }
      } else if (channel === 255 && payload[0] === 0) proc.write("\x04"); // v5: client closed stdin
    });
    return;
  }
  // Without a TTY: plain pipes, stdout on channel 1 and stderr on channel 2, and stdin (when asked for)
  // on channel 0. Only v5 can end stdin alone: CLOSE (255) followed by the channel number (KEP-4006;
  // kubernetes staging/src/k8s.io/apimachinery/pkg/util/remotecommand/constants.go). Under v4 the
  // API server's wsstream (k8s.io/apiserver/pkg/util/wsstream/conn.go, handle) skips a frame for a
  // channel it does not have, so stdin stays open there, as it does here.
  // detached: a session of its own, as a PTY gives, so liveShells() counts what it started too.
  const child = spawnChild(command[0]!, command.slice(1), {
    cwd: dir,
    env,
    detached: true,
    stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
  record(child.pid ?? -1);
  if (stdin && child.pid) shells.push(child.pid);
  child.stdin?.on("error", () => {}); // the process may end before reading all its input
  child.stdout!.on("data", (d: Buffer) => ws.readyState === ws.OPEN && ws.send(Buffer.concat([Buffer.from([1]), d])));
  child.stderr!.on("data", (d: Buffer) => ws.readyState === ws.OPEN && ws.send(Buffer.concat([Buffer.from([2]), d])));
  ws.on("message", (data: Buffer) => {
    if (data[0] === 0) child.stdin?.write(data.subarray(1));
    else if (data[0] === 255 && data[1] === 0 && ws.protocol === "v5.channel.k8s.io") child.stdin?.end();
  });
  // 'close': the process ended and its output pipes are drained, so the status comes after the last byte.
  child.on("close", (code) => sendStatus(ws, code));
}
