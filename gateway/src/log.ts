// Structured JSON logs, one object per line. Callers never pass tokens or other secrets.
import type { Writable } from "node:stream";
export type Level = "debug" | "info" | "warn" | "error";
const rank: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  log(level: Level, msg: string, fields?: Record<string, unknown>): void;
}

/**
 * How much stdout may hold unwritten before lines are dropped (and counted) instead. In a pod,
 * stdout is a pipe to the container runtime, and "Pipes (and sockets): ... asynchronous on POSIX"
 * (nodejs.org/api/process.html, "A note on process I/O"): a reader that stops reading makes Node
 * buffer every line in memory. Files and terminals are written synchronously and never buffer.
 */
export const STDOUT_BACKLOG_BYTES = 8 * 1024 * 1024;

/** Writes whole lines to a stream; never throws, never blocks on a backlog, and counts what it had to drop. */
export interface LineWriter {
  (line: string): void;
  /** Lines dropped: the stream failed (EPIPE: its reader is gone) or held more than the backlog. */
  dropped(): number;
}

/**
 * A line writer for `stream`: an error on it (EPIPE, EBADF) is caught instead of ending the process
 * as an unhandled 'error' event, and after it, or while more than `backlogBytes` wait unwritten,
 * lines are dropped and counted: the log must never stop the sessions or the process.
 */
export function lineWriter(stream: Writable, backlogBytes = STDOUT_BACKLOG_BYTES): LineWriter {
  let failed = false;
  let dropped = 0;
  stream.on("error", () => (failed = true));
  const write = ((line: string) => {
    // A stream destroyed after its error (or closed with its reader) takes nothing more either.
    if (failed || stream.destroyed || stream.writableEnded || stream.writableLength > backlogBytes) {
      dropped++;
      return;
    }
    stream.write(line);
  }) as LineWriter;
  write.dropped = () => dropped;
  return write;
}

let stdout: LineWriter | undefined;
/** The process's stdout as a line writer (logs and, without auditFile, audit records share it). */
export function stdoutLines(): LineWriter {
  return (stdout ??= lineWriter(process.stdout));
}

/**
 * One JSON line: JSON.stringify, with the characters it leaves raw that a line-based reader or a
 * terminal acts on escaped as \uXXXX (still the same JSON value): DEL and the C1 controls
 * U+007F-U+009F (NEL U+0085 is a line break to Python's str.splitlines, CSI U+009B starts a
 * terminal control sequence) and U+2028/U+2029 (line and paragraph separators: line breaks to
 * YAML, Python and JavaScript). JSON.stringify escapes only U+0000-U+001F, `"` and `\\`
 * (ECMA-262, QuoteJSONString). Every line the gateway writes (logs, audit, recordings) goes
 * through it.
 */
export function jsonLine(value: unknown): string {
  return (
    JSON.stringify(value).replace(
      /[\u007f-\u009f\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    ) + "\n"
  );
}

export function jsonLogger(minLevel: Level, write: (line: string) => void = stdoutLines()): Logger {
  return {
    log(level, msg, fields) {
      if (rank[level] < rank[minLevel]) return;
      write(jsonLine({ time: new Date().toISOString(), level, msg, ...fields }));
    },
  };
}

/**
 * An error's text for the log. Not every rejection is an Error: @kubernetes/client-node's exec
 * rejects with the WebSocket's ErrorEvent (`message`, and the underlying `error`) when the API
 * server refuses the upgrade, e.g. when it cannot reach the node's kubelet; String() of that is
 * "[object Object]", which loses the cause.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null) {
    const { message, error: inner } = error as { message?: unknown; error?: unknown };
    const parts = [
      typeof message === "string" ? message : undefined,
      inner instanceof Error && inner.message !== message ? inner.message : undefined,
    ].filter(Boolean);
    if (parts.length > 0) return parts.join(": ");
    try {
      return JSON.stringify(error);
    } catch {
      return String(error);
    }
  }
  return String(error);
}
