// Where session recordings go: a sink starts a recording per session and lists and serves the
// recordings it holds. Two sinks: a directory (recordDir, volume.ts) and an S3 bucket
// (recordS3Bucket, s3/). Both write asciicast v2 (cast.ts) through CastEncoder, and
// both follow one policy on storage failure (gateway/README.md, "Recordings on storage failure"):
// a recording that cannot be started refuses its session before a shell exists; a write that fails
// or takes longer than recordWriteTimeoutMs mid-session calls the recording's failure listeners
// once, and the session ends (close code recording-failed); no error of a sink reaches the process.
import { isUtf8 } from "node:buffer";
import type { Readable } from "node:stream";
import { jsonLine } from "../log.js";
import { BYTES_EVENT, END_EVENT, type RecordingSummary } from "./cast.js";

export type { RecordingSummary } from "./cast.js";

/** Who and what a recording is of: written into its header, read back by the recordings listing. */
export interface RecordingMeta {
  session: string;
  user: string;
  /** The container entered (also the asciicast title). */
  target: string;
}

export interface TerminalSize {
  cols: number;
  rows: number;
}

/** One session's recording, as a sink keeps it. */
export interface Recording {
  /** `<start time>-<session>`: the id the listing and GET /v1/recordings/<id> use. */
  readonly id: string;
  /**
   * Records output; false when the recording holds more than it may: pause the output until a drain
   * listener is called. `data` is only valid during the call (the Docker backend reads every stream
   * into one shared buffer): what is kept must be copied or encoded.
   */
  output(data: Buffer): boolean;
  resize(cols: number, rows: number): void;
  /** Called once when a write fails mid-session; the recording takes nothing more after that. */
  onFailure(listener: (error: Error) => void): void;
  /** Called when the recording can take output again after output() returned false. */
  onDrain(listener: () => void): void;
  /** Writes END_EVENT and stores what is left; rejects when that cannot be done (or failed before). */
  finish(closeCode: string): Promise<void>;
}

export interface StoredRecording {
  size: number;
  body: Readable;
}

export interface RecordingSink {
  /** "volume" or "s3", for logs and metrics. */
  readonly kind: "volume" | "s3";
  /** Starts a recording; resolves once its header is stored, rejects when it cannot be (the session is then refused). */
  start(meta: RecordingMeta, size: TerminalSize): Promise<Recording>;
  /** Every recording, newest first. */
  list(): Promise<RecordingSummary[]>;
  /** A recording's bytes, or null when the id names none (the id is checked by the caller: recordingStart). */
  get(id: string): Promise<StoredRecording | null>;
  /** Starts the sink's upkeep (volume: retention cleanup; S3: completing uploads of stopped gateways); returns its stop. */
  maintain(): () => void;
}

/** How much of a recording's end a listing reads for its last event (cast.ts castEnding). */
export const ENDING_BYTES = 4096;

/** `<ISO start time with : and . as ->-<session uuid>` (cast.ts recordingStart reads it back). */
export function recordingId(start: Date, session: string): string {
  return `${start.toISOString().replace(/[:.]/g, "-")}-${session}`;
}

/**
 * The lines of an asciicast v2 recording (docs.asciinema.org/manual/asciicast/v2): a header, then
 * [seconds, "o", text] output and [seconds, "r", "COLSxROWS"] resize events, BYTES_EVENT after output
 * that is not valid UTF-8, and END_EVENT last. Besides the spec's header attributes, an `entryway`
 * object names the session and its user (readers take the attributes they know).
 */
export class CastEncoder {
  private readonly started = process.hrtime.bigint();

  header(meta: RecordingMeta, size: TerminalSize): string {
    return jsonLine({
      version: 2,
      width: size.cols,
      height: size.rows,
      timestamp: Math.floor(Date.now() / 1000),
      title: meta.target,
      entryway: meta,
    });
  }

  /** The "o" event; when the bytes are not UTF-8 (pipe mode, or a program writing raw bytes), also their exact copy. */
  output(data: Buffer): string {
    const seconds = this.seconds();
    const text = event(seconds, "o", data.toString("utf8"));
    return isUtf8(data) ? text : text + event(seconds, BYTES_EVENT, data.toString("base64"));
  }

  resize(cols: number, rows: number): string {
    return event(this.seconds(), "r", `${cols}x${rows}`);
  }

  end(closeCode: string): string {
    return event(this.seconds(), END_EVENT, closeCode);
  }

  /** Seconds since the recording started. */
  seconds(): number {
    return Number((Number(process.hrtime.bigint() - this.started) / 1e9).toFixed(6));
  }
}

/** One event line. */
export function event(seconds: number, code: string, data: string): string {
  return jsonLine([seconds, code, data]);
}

/**
 * The listeners and the once-only failure every recording shares; a sink's recording calls fail()
 * and drained(), and checks `failure` before writing.
 */
export abstract class RecordingBase implements Recording {
  protected failure: Error | undefined;
  private readonly failureListeners: ((error: Error) => void)[] = [];
  private readonly drainListeners: (() => void)[] = [];

  /** `encoder` wrote the header: event times count from it. */
  constructor(
    readonly id: string,
    protected readonly encoder: CastEncoder,
  ) {}

  abstract output(data: Buffer): boolean;
  abstract resize(cols: number, rows: number): void;
  abstract finish(closeCode: string): Promise<void>;

  onFailure(listener: (error: Error) => void): void {
    this.failureListeners.push(listener);
  }

  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  protected fail(error: unknown): void {
    if (this.failure) return;
    this.failure = error instanceof Error ? error : new Error(String(error));
    for (const listener of this.failureListeners) listener(this.failure);
  }

  protected drained(): void {
    for (const listener of this.drainListeners) listener();
  }
}

/** Rejects with a clear error when `promise` has not settled within `ms`; the timer never holds the process. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
