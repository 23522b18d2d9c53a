// Audit events, one JSON object per line, to a file or stdout. Writing one never throws, blocks the
// sessions or ends the process: a file that fails (ENOSPC, EIO) sends its records to stdout instead,
// and stdout is a line writer that drops (and counts) lines rather than grow without end (log.ts).
import { createWriteStream } from "node:fs";
import { errorMessage, jsonLine, stdoutLines } from "./log.js";

export interface AuditEvent {
  /** recording.failed: the last write of a session's recording failed after the session ended for another reason. */
  event: "session.start" | "session.end" | "session.refused" | "recording.failed";
  session: string;
  user?: string;
  target: string;
  /** The command the client chose (allowCommand), when it chose one. */
  command?: string[];
  /** The container actually entered, once resolved. */
  container?: string;
  /** The session's recording (its id in GET /v1/recordings), once started. */
  recording?: string;
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

/** A reviewer's access to recordings (listing or downloading one), or a user's listing of targets, allowed or not. */
export interface RecordingAccessEvent {
  event: "recordings.list" | "recordings.get" | "targets.list";
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

/**
 * To a file (appended) when `path` is set, else to the log stream as {"type":"audit",...}. A record
 * the file could not take (its write failed, or the file failed before) goes to stdout, so a full or
 * broken audit volume loses no record; the first failure is logged there too.
 */
export function auditSink(path: string, stdout: (line: string) => void = stdoutLines()): AuditSink {
  const file = path ? createWriteStream(path, { flags: "a" }) : undefined;
  let fileFailed = false;
  file?.on("error", (error) => {
    if (fileFailed) return;
    fileFailed = true;
    stdout(
      jsonLine({
        time: new Date().toISOString(),
        level: "error",
        msg: "the audit file cannot be written: audit records go to stdout",
        error: errorMessage(error),
      }),
    );
  });
  return {
    write(event) {
      const line = jsonLine({ type: "audit", time: new Date().toISOString(), ...event });
      if (file && !fileFailed) file.write(line, (error) => error && stdout(line));
      else stdout(line);
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!file || fileFailed || file.destroyed) return resolve();
        file.once("error", () => resolve());
        file.end(() => resolve());
      }),
  };
}
