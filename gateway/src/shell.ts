// The lingering-shell fix. Closing an exec stream does not end the process behind it, in Kubernetes
// (kubernetes/kubernetes#89031, opencontainers/runc#3359) or in Docker, and neither API can kill an
// exec. So the shell starts through a wrapper that first prints its own PID and start time (an OSC
// sequence the gateway strips from the output) and then execs the shell, which keeps both. When a
// client vanishes, the gateway runs a second exec that sends the shell SIGHUP (what a terminal
// hangup sends), then SIGKILL if it is still there after the grace period. The reaper signals the
// PID only while the process there has the reported start time: after a container restart the PID
// can belong to another process (PID reuse), which must not be killed.
//
// Start time: field 22 of /proc/<pid>/stat, in clock ticks since boot (proc(5)). Field 2 (comm)
// is in parentheses and may itself hold spaces and parentheses, so the fields are counted after
// the LAST ')': field 3 is the first word there, field 22 the 20th. Both scripts read the file with
// the shell's own `read` (no cat in minimal images) and keep ')' in a variable, so no parenthesis
// appears in an expansion pattern.

const MARKER = "\x1b]7337;entryway-pid=";
const MARKER_BYTES = Buffer.from(MARKER);

/** Shell function: the start time of PID $1 (empty when there is no such process). */
const START_TIME = `start_time() { read -r stat < "/proc/$1/stat" 2>/dev/null || return 0; paren=')'; set -- \${stat##*"$paren"}; shift 19; printf %s "$1"; }`;

const WRAPPER = [
  START_TIME,
  `printf '\\033]7337;entryway-pid=%s,%s\\007' "$$" "$(start_time $$)"`,
  `[ "$#" -gt 0 ] && exec "$@"`,
  "command -v bash >/dev/null 2>&1 && exec bash",
  "exec sh",
].join("; ");

/** The command that runs `command` (or bash, else sh, when empty) after reporting the shell's PID. */
export function wrapCommand(command: string[]): string[] {
  return ["/bin/sh", "-c", WRAPPER, "entryway-shell", ...command];
}

const REAPER = [
  START_TIME,
  // Still the same process: the PID exists and started when the wrapper said.
  `ours() { [ "$(start_time "$1")" = "$2" ]; }`,
  `ours "$1" "$2" || exit 0`,
  `kill -HUP "$1" 2>/dev/null || exit 0`,
  "n=0",
  `while ours "$1" "$2"; do`,
  `  if [ "$n" -ge "$3" ]; then kill -KILL "$1"; exit 2; fi`,
  "  sleep 0.1 2>/dev/null || sleep 1",
  "  n=$((n+1))",
  "done",
  "exit 1",
].join("\n");

/** Exit codes of the reaper command. */
export const ReapResult = { 0: "gone", 1: "hangup", 2: "killed" } as const;

/** The shell's identity as the wrapper reported it. */
export interface ShellProcess {
  pid: number;
  /** /proc/<pid>/stat field 22 (clock ticks after boot); empty when the container has no /proc to read. */
  startTime: string;
}

/** A second exec that ends the shell: SIGHUP, then SIGKILL after `graceSeconds`; never another process on a reused PID. */
export function reapCommand(shell: ShellProcess, graceSeconds: number): string[] {
  return ["/bin/sh", "-c", REAPER, "entryway-reaper", String(shell.pid), shell.startTime, String(Math.max(1, Math.round(graceSeconds * 10)))];
}

/** "<pid>,<start time>": at most 10 + 1 + 20 digits. */
const MARKER_VALUE_MAX = 31;

/** Output scanned for the marker before giving up (the wrapper prints it first; the TTY may echo early input before it). */
const SCAN_LIMIT = 64 * 1024;

/**
 * Takes the PID marker out of the shell's first output. Bytes that could still be the start of the
 * marker are held back until it is complete or ruled out; everything else passes through unchanged.
 */
export class PidMarkerFilter {
  shell: ShellProcess | null = null;
  private done = false;
  private scanned = 0;
  private held: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer {
    if (this.done) return chunk;
    const data = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = Buffer.alloc(0);
    this.scanned += chunk.length;
    const start = data.indexOf(MARKER_BYTES);
    if (start >= 0) {
      const end = data.indexOf(0x07, start + MARKER_BYTES.length);
      if (end < 0 && data.length - start <= MARKER_BYTES.length + MARKER_VALUE_MAX) return this.hold(data, start);
      const value = /^(\d{1,10}),(\d{0,20})$/.exec(end < 0 ? "" : data.subarray(start + MARKER_BYTES.length, end).toString("latin1"));
      const pid = Number(value?.[1]);
      if (!value || pid <= 0) return this.finish(data); // not our marker after all
      this.shell = { pid, startTime: value[2]! };
      return this.finish(Buffer.concat([data.subarray(0, start), data.subarray(end + 1)]));
    }
    if (this.scanned > SCAN_LIMIT) return this.finish(data);
    return this.hold(data, data.length - partialMarkerSuffix(data));
  }

  /** True once the marker was found or ruled out. */
  get settled(): boolean {
    return this.done;
  }

  /** Output held back when the stream ends before the marker completed. */
  flush(): Buffer {
    return this.finish(this.held);
  }

  private hold(data: Buffer, from: number): Buffer {
    this.held = Buffer.from(data.subarray(from));
    return data.subarray(0, from);
  }

  private finish(out: Buffer): Buffer {
    this.done = true;
    this.held = Buffer.alloc(0);
    return out;
  }
}

/** Length of the longest suffix of `data` that is a proper prefix of the marker. */
function partialMarkerSuffix(data: Buffer): number {
  for (let length = Math.min(data.length, MARKER_BYTES.length - 1); length > 0; length--) {
    if (data.subarray(data.length - length).equals(MARKER_BYTES.subarray(0, length))) return length;
  }
  return 0;
}
