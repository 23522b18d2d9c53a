// How bench-scale.ts measures a command: its process tree's peak RSS (polled from /proc) and the
// tree's CPU time (GNU time's rusage); see bench-scale.ts's header.
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runBytes } from "../../testkit/harness/process";

/** How often the process tree is read (ms). */
export const POLL_MS = 200;

export interface Measurement {
  ok: boolean;
  wallSeconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
  /** The largest number of processes seen in the tree at once. */
  processes: number;
  stdout: string;
  stderr: string;
}

/** The children of every thread of a process: Go programs (pulumi) start processes from any thread. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) => {
      try {
        return readFileSync(`/proc/${pid}/task/${task}/children`, "utf8")
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number);
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

function treeOf(root: number): number[] {
  const all: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    all.push(pid);
    todo.push(...childrenOf(pid));
  }
  return all;
}

function rssKiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Runs a command to its end, polling its process tree's RSS and CPU time (see the header). */
async function measured(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<Measurement> {
  const started = performance.now();
  let peak = 0;
  let processes = 0;
  let timer: NodeJS.Timeout | undefined;
  const poll = (pid: number) => {
    const tree = treeOf(pid);
    processes = Math.max(processes, tree.length);
    peak = Math.max(peak, tree.reduce((sum, pid) => sum + rssKiB(pid), 0) * 1024);
  };
  const onSpawn = (child: ChildProcess) => {
    if (!child.pid) return;
    timer = setInterval(poll, POLL_MS, child.pid);
    poll(child.pid);
  };
  try {
    const result = await runBytes(command, args, { ...options, onSpawn });
    return {
      ok: result.status === 0,
      wallSeconds: (performance.now() - started) / 1000,
      cpuSeconds: Number.NaN, // filled in from GNU time by measuredTree
      peakRssBytes: peak,
      processes,
      stdout: result.stdout.toString(),
      stderr: result.stderr,
    };
  } finally {
    clearInterval(timer);
  }
}

/**
 * CPU time from GNU time (Debian package "time"): the user and system time of the command and of
 * every descendant reaped in its tree (the engine runner waits for `pulumi`, which waits for its
 * providers), from the kernel's rusage; and its %M, the largest RSS of any one process of the tree.
 */
const GNU_TIME = "/usr/bin/time";

export async function measuredTree(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<Measurement> {
  const report = path.join(os.tmpdir(), `entryway-bench-scale-time-${process.pid}-${Date.now()}.txt`);
  const result = await measured(GNU_TIME, ["-f", "%e %U %S %M", "-o", report, command, ...args], options);
  try {
    const [, user, system, maxKiB] = readFileSync(report, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
    // A command shorter than the poll interval (helm template of 10 workspaces) can end before the
    // first poll of its tree: the largest single process the kernel saw (%M) is then the floor.
    return { ...result, cpuSeconds: user + system, peakRssBytes: Math.max(result.peakRssBytes, maxKiB * 1024) };
  } catch {
    return result;
  } finally {
    rmSync(report, { force: true });
  }
}
