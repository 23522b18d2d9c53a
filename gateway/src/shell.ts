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

// On a terminal the wrapper then waits for the gateway's START_SIGNAL before it runs the command.
// The runtime sets the new terminal's modes with a read-modify-write while the process already runs:
// conmon (podman, CRI-O) reads them, adds ONLCR and writes them all back when runc hands it the
// terminal (containers/conmon src/ctrl.c, terminal_accept_cb: tcgetattr, then tcsetattr TCSANOW),
// and runc does the same to clear ONLCR when it holds the terminal itself (opencontainers/runc
// tty.go recvtty: console.ClearONLCR, a tcget and tcset in containerd/console tc_unix.go setONLCR,
// in a goroutine while the process starts), which is how CRI-O serves a Kubernetes exec with a
// terminal (cri-o internal/oci/oci_unix.go ttyCmd: `runc exec` on a terminal of its own, the
// process spec's terminal set). containerd's shim only makes the terminal non-blocking
// (containerd/console Epoller.Add): no race there, and the handshake costs it one round trip.
// A command that sets raw mode between that read and that write (vim, a TUI, `stty raw` as its
// first action) has it undone. The wrapper's first output is the proof that the runtime is done: conmon
// starts reading the terminal only after terminal_accept_cb returned (src/conmon.c registers its
// stdout reader once the runtime has exited, and fails the exec when the terminal was not set up by
// then), and runc copies the terminal's output only once recvtty's ClearONLCR is done. (Podman answers the
// exec start's upgrade before it even tells conmon to start the runtime, libpod
// oci_conmon_exec_common.go attachExecHTTP, so the upgrade proves nothing.) So the gateway sends the
// signal once it has read the PID marker (and applied the client's size), and the command starts after
// it. The signal is the terminal's end-of-file character, ^D: on a fresh terminal (canonical mode)
// the line discipline ends the wrapper's `read` with it at once and does not echo it (Linux
// drivers/tty/n_tty.c, n_tty_receive_char_canon: EOF_CHAR ends the line unechoed), so nothing of the
// handshake reaches the output, and input typed after it stays queued for the command.
//
// On a terminal the wrapper also sets the terminal's size itself, from the size the gateway knew when
// it made the exec, before it prints its PID. The runtime's own resize is not enough for the first
// command: podman answers the Engine API's resize before conmon applies it (conmon reads sizes from
// its control FIFO in its main loop, containers/conmon src/ctrl.c), so under load a shell started
// after that answer still ran `stty size` at 24x80. A window size is not a terminal mode (TIOCSWINSZ,
// not tcsetattr: Linux drivers/tty/tty_io.c tiocswinsz), so the runtime's read-modify-write of the
// modes above cannot undo it; the gateway's later resizes go through the runtime as before. Without
// an `stty` in the image the size comes from the runtime's resize alone.
const WRAPPER = [
  START_TIME,
  `if [ "$1" = wait ]; then stty rows "$2" cols "$3" 2>/dev/null; fi`,
  `printf '\\033]7337;entryway-pid=%s,%s\\007' "$$" "$(start_time $$)"`,
  `if [ "$1" = wait ]; then read -r _; fi`,
  "shift 3",
  `[ "$#" -gt 0 ] && exec "$@"`,
  "command -v bash >/dev/null 2>&1 && exec bash",
  "exec sh",
].join("; ");

/** What the gateway writes to a wrapper started with waitForStart: the terminal's end-of-file character (^D). */
export const START_SIGNAL = Buffer.from([0x04]);

/**
 * The command that runs `command` (or bash, else sh, when empty) after reporting the shell's PID;
 * on a terminal (`terminal`: the size the client asked for so far), only once START_SIGNAL arrived
 * on its stdin, at that size.
 */
export function wrapCommand(command: string[], { terminal }: { terminal?: { cols: number; rows: number } }): string[] {
  const [mode, rows, cols] = terminal ? ["wait", terminal.rows, terminal.cols] : ["go", 0, 0];
  return [
    "/bin/sh",
    "-c",
    WRAPPER,
    "entryway-shell",
    mode,
    String(Math.trunc(rows)),
    String(Math.trunc(cols)),
    ...command,
  ];
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
  return [
    "/bin/sh",
    "-c",
    REAPER,
    "entryway-reaper",
    String(shell.pid),
    shell.startTime,
    String(Math.max(1, Math.round(graceSeconds * 10))),
  ];
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
      const value = /^(\d{1,10}),(\d{0,20})$/.exec(
        end < 0 ? "" : data.subarray(start + MARKER_BYTES.length, end).toString("latin1"),
      );
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
