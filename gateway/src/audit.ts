// Audit events (one JSON object per line) and optional asciicast v2 recordings of session output.
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { join } from "node:path";

export interface AuditEvent {
  event: "session.start" | "session.end" | "session.refused";
  session: string;
  user?: string;
  target: string;
  /** The command the client chose (allowCommand), when it chose one. */
  command?: string[];
  /** The container actually entered, once resolved. */
  container?: string;
  client: string;
  startedAt: string;
  endedAt?: string;
  durationMs?: number;
  exitCode?: number | null;
  bytesIn?: number;
  bytesOut?: number;
  closeCode?: string;
  reason?: string;
}

/** A reviewer's access to recordings (listing or downloading one), allowed or not. */
export interface RecordingAccessEvent {
  event: "recordings.list" | "recordings.get";
  /** The recording asked for (recordings.get), when its id is valid. */
  recording?: string;
  user?: string;
  client: string;
  /** HTTP status answered: 200, 401, 403, 404, 429, 503. */
  status: number;
  reason?: string;
}

/** A debug container added to a pod for a session: who, which pod and container, which image. */
export interface DebugContainerEvent {
  event: "debug.container";
  session: string;
  user: string;
  /** The pod (namespace/pod) and the container whose process namespace it joined. */
  pod: string;
  targetContainer: string;
  /** The ephemeral container's name (the gateway's making) and image. */
  container: string;
  image: string;
  client: string;
}

/**
 * An abandoned shell the reaper could not end within reapTimeoutMs (or whose reaper failed): it may
 * still run in the container.
 */
export interface ReapFailedEvent {
  event: "reap.failed";
  session: string;
  user?: string;
  /** The container (as the session's records name it) and the shell's PID there. */
  container: string;
  pid: number;
  reason: string;
}

export interface AuditSink {
  write(event: AuditEvent | RecordingAccessEvent | DebugContainerEvent | ReapFailedEvent): void;
  close(): Promise<void>;
}

/** To a file (appended) when `path` is set, else to the log stream as {"type":"audit",...}. */
export function auditSink(path: string, stdout: (line: string) => void = (line) => process.stdout.write(line)): AuditSink {
  const file = path ? createWriteStream(path, { flags: "a" }) : undefined;
  return {
    write(event) {
      const line = JSON.stringify({ type: "audit", time: new Date().toISOString(), ...event }) + "\n";
      if (file) file.write(line);
      else stdout(line);
    },
    close: () => new Promise((resolve) => (file ? file.end(resolve) : resolve())),
  };
}

/** Who and what a recording is of: written into its header, read back by the recordings listing. */
export interface RecordingMeta {
  session: string;
  user: string;
  /** The container entered (also the asciicast title). */
  target: string;
}

/**
 * An asciicast v2 file (docs.asciinema.org/manual/asciicast/v2): a header line, then
 * [seconds, "o", text] output and [seconds, "r", "COLSxROWS"] resize events. Besides the spec's
 * header attributes, an `entryway` object names the session and its user (readers take the
 * attributes they know). The file name `<start time>-<session>.cast` is the recording's id.
 */
export class AsciicastRecorder {
  private readonly file: WriteStream;
  private readonly started = process.hrtime.bigint();

  constructor(dir: string, meta: RecordingMeta, size: { cols: number; rows: number }) {
    mkdirSync(dir, { recursive: true });
    this.file = createWriteStream(join(dir, `${new Date().toISOString().replace(/[:.]/g, "-")}-${meta.session}.cast`), { mode: 0o640 });
    const header = { version: 2, width: size.cols, height: size.rows, timestamp: Math.floor(Date.now() / 1000), title: meta.target, entryway: meta };
    this.file.write(JSON.stringify(header) + "\n");
  }
  get path(): string {
    return String(this.file.path);
  }

  output(text: string): void {
    this.event("o", text);
  }

  resize(cols: number, rows: number): void {
    this.event("r", `${cols}x${rows}`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.file.end(resolve));
  }

  private event(type: string, data: string): void {
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    this.file.write(JSON.stringify([Number(seconds.toFixed(6)), type, data]) + "\n");
  }
}
