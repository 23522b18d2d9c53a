// Clients on a pseudo-terminal for bench-exec-node.ts: a command's wall time and CPU with its
// stdin a terminal, keystroke echo through `cat` in raw mode, and the time to the first byte.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as pty from "node-pty";
import { since, sleep, timeReport } from "../../testkit/gateway/measure";

export interface PtyRun {
  wall: number;
  cpu: number;
}

/** A command on a pseudo-terminal (stdin), its stdout to /dev/null; wall time and its CPU from GNU time. */
export async function timeInPty(command: string[], env: NodeJS.ProcessEnv): Promise<PtyRun> {
  const dir = mkdtempSync(path.join(tmpdir(), "entryway-bench-pty-"));
  const report = path.join(dir, "time");
  try {
    const start = process.hrtime.bigint();
    const terminal = pty.spawn(
      "/bin/sh",
      ["-c", `exec /usr/bin/time -o "$0" -f "%U %S" "$@" >/dev/null`, report, ...command],
      { cols: 120, rows: 40, env: env as Record<string, string> },
    );
    let said = "";
    terminal.onData((d) => (said += d));
    const code = await new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
    const wall = since(start) / 1000;
    if (code !== 0) throw new Error(`${command.join(" ")} exited with ${code}: ${said.slice(-500)}`);
    return { wall, cpu: timeReport(report) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A client on a pseudo-terminal running `cat` in raw mode remotely: one byte in, its echo timed. */
export async function ptyEcho(command: string[], env: NodeJS.ProcessEnv) {
  const terminal = pty.spawn(command[0]!, command.slice(1), {
    cols: 120,
    rows: 40,
    env: env as Record<string, string>,
  });
  let bytes = 0;
  let wake = () => {};
  terminal.onData((d) => {
    bytes += d.length;
    wake();
  });
  // `stty raw -echo` has run once the terminal is quiet and a probe byte comes back alone.
  await sleep(1500);
  for (;;) {
    const before = bytes;
    terminal.write("p");
    await new Promise<void>((resolve) => {
      wake = () => bytes > before && resolve();
      setTimeout(resolve, 5000);
    });
    if (bytes === before + 1) break;
    await sleep(500);
  }
  return {
    async key(): Promise<number> {
      const before = bytes;
      const start = process.hrtime.bigint();
      const arrived = new Promise<void>((resolve) => (wake = () => bytes > before && resolve()));
      terminal.write("k");
      await arrived;
      return since(start);
    },
    stop(): Promise<void> {
      const exited = new Promise<void>((resolve) => terminal.onExit(() => resolve()));
      terminal.kill("SIGTERM");
      return exited;
    },
  };
}

/** Milliseconds from spawning the client on a pseudo-terminal to the first byte it writes there. */
export async function firstByte(command: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const start = process.hrtime.bigint();
  const terminal = pty.spawn(command[0]!, command.slice(1), {
    cols: 120,
    rows: 40,
    env: env as Record<string, string>,
  });
  const ms = await new Promise<number>((resolve) => {
    const first = terminal.onData(() => {
      first.dispose();
      resolve(since(start));
    });
  });
  const exited = new Promise<void>((resolve) => terminal.onExit(() => resolve()));
  terminal.write("exit\r");
  await exited;
  return ms;
}
