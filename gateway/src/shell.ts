// The lingering-shell fix. Closing an exec stream does not end the process behind it, in Kubernetes
// (kubernetes/kubernetes#89031, opencontainers/runc#3359) or in Docker, and neither API can kill an
// exec. So the shell starts through a wrapper that first prints its own PID (an OSC sequence the
// gateway strips from the output) and then execs the shell, which keeps that PID. When a client
// vanishes, the gateway runs a second exec that sends the shell SIGHUP (what a terminal hangup
// sends), then SIGKILL if it is still there after the grace period.

const MARKER = "\x1b]7337;entryway-pid=";
const MARKER_BYTES = Buffer.from(MARKER);

const WRAPPER = [
  `printf '\\033]7337;entryway-pid=%s\\007' "$$"`,
  `[ "$#" -gt 0 ] && exec "$@"`,
  "command -v bash >/dev/null 2>&1 && exec bash",
  "exec sh",
].join("; ");

/** The command that runs `command` (or bash, else sh, when empty) after reporting the shell's PID. */
export function wrapCommand(command: string[]): string[] {
  return ["/bin/sh", "-c", WRAPPER, "entryway-shell", ...command];
}

const REAPER = [
  `kill -HUP "$1" 2>/dev/null || exit 0`,
  "n=0",
  `while kill -0 "$1" 2>/dev/null; do`,
  `  if [ "$n" -ge "$2" ]; then kill -KILL "$1"; exit 2; fi`,
  "  sleep 0.1 2>/dev/null || sleep 1",
  "  n=$((n+1))",
  "done",
  "exit 1",
].join("\n");

/** Exit codes of the reaper command. */
export const ReapResult = { 0: "gone", 1: "hangup", 2: "killed" } as const;

/** A second exec that ends the shell: SIGHUP, then SIGKILL after `graceSeconds`. */
export function reapCommand(pid: number, graceSeconds: number): string[] {
  return ["/bin/sh", "-c", REAPER, "entryway-reaper", String(pid), String(Math.max(1, Math.round(graceSeconds * 10)))];
}

/** Output scanned for the marker before giving up (the wrapper prints it first; the TTY may echo early input before it). */
const SCAN_LIMIT = 64 * 1024;

/**
 * Takes the PID marker out of the shell's first output. Bytes that could still be the start of the
 * marker are held back until it is complete or ruled out; everything else passes through unchanged.
 */
export class PidMarkerFilter {
  pid: number | null = null;
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
      if (end < 0 && data.length - start <= MARKER_BYTES.length + 12) return this.hold(data, start);
      const pid = end < 0 ? NaN : Number(data.subarray(start + MARKER_BYTES.length, end).toString("latin1"));
      if (!Number.isInteger(pid) || pid <= 0) return this.finish(data); // not our marker after all
      this.pid = pid;
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
