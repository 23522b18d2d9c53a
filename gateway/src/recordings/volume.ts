// The directory sink (recordDir): one asciicast file per session, and the cleanup of recordings
// older than recordRetentionDays. Ids are checked against one strict pattern before any file
// system call, so no id can name a path outside the directory.
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { mkdir, open, readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { GatewayConfig } from "../config.js";
import { errorMessage, type Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import { castEnding, recordingStart, type RecordingSummary } from "./cast.js";
import {
  CastEncoder,
  ENDING_BYTES,
  RecordingBase,
  recordingId,
  withDeadline,
  type Recording,
  type RecordingMeta,
  type RecordingSink,
  type StoredRecording,
  type TerminalSize,
} from "./sink.js";

const DAY_MS = 24 * 3600 * 1000;
/** The header line is read up to this much; a longer one is not a recording this gateway wrote. */
const MAX_HEADER_BYTES = 64 * 1024;

/** The file of a valid id; null for anything else (path separators, dots, other names). */
export function recordingFile(dir: string, id: string): string | null {
  return recordingStart(id) ? join(dir, `${id}.cast`) : null;
}

async function readHeader(file: string): Promise<Partial<RecordingMeta>> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(MAX_HEADER_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, MAX_HEADER_BYTES, 0);
    const text = buffer.subarray(0, bytesRead).toString("utf8");
    const newline = text.indexOf("\n");
    if (newline < 0) return {};
    const header = JSON.parse(text.slice(0, newline)) as { title?: unknown; entryway?: Partial<RecordingMeta> };
    return { target: typeof header.title === "string" ? header.title : undefined, ...header.entryway };
  } catch {
    return {};
  } finally {
    await handle.close();
  }
}

/** The last ENDING_BYTES of a file, as text. */
async function readEnding(file: string, size: number): Promise<string> {
  const handle = await open(file, "r");
  try {
    const length = Math.min(size, ENDING_BYTES);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, size - length);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}

/** The ids of the recordings in `dir` (other files are ignored); a missing directory has none. */
async function recordingIds(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir))
      .filter((name) => name.endsWith(".cast") && recordingStart(name.slice(0, -5)))
      .map((name) => name.slice(0, -5));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** Every recording in `dir`, newest first. */
export async function listRecordings(dir: string): Promise<RecordingSummary[]> {
  const summaries: RecordingSummary[] = [];
  for (const id of await recordingIds(dir)) {
    const start = recordingStart(id)!;
    const file = join(dir, `${id}.cast`);
    try {
      const info = await stat(file);
      if (!info.isFile()) continue;
      const meta = await readHeader(file);
      const ending = castEnding(await readEnding(file, info.size));
      summaries.push({
        id,
        user: typeof meta.user === "string" ? meta.user : "",
        target: typeof meta.target === "string" ? meta.target : "",
        start: start.toISOString(),
        duration: ending.duration,
        size: info.size,
        complete: ending.complete,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error; // removed meanwhile (cleanup on another replica)
    }
  }
  return summaries.sort((a, b) => b.start.localeCompare(a.start));
}

/**
 * Deletes the recordings last written more than `retentionDays` before `now` (a session still being
 * recorded writes on every output, so only idle sessions older than the retention could lose their
 * file early). Returns how many went. Other files in the directory are left alone.
 */
export async function pruneRecordings(dir: string, retentionDays: number, now = Date.now()): Promise<number> {
  const cutoff = now - retentionDays * DAY_MS;
  let removed = 0;
  for (const id of await recordingIds(dir)) {
    const file = join(dir, `${id}.cast`);
    try {
      if ((await stat(file)).mtimeMs >= cutoff) continue;
      await unlink(file);
      removed++;
    } catch (error) {
      // Another replica sharing the volume may have removed it first.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return removed;
}

/** Prunes now and then every `intervalMs` (hourly) until stopped; failures are logged, never fatal. */
export function startRecordingCleanup(
  dir: string,
  retentionDays: number,
  logger: Logger,
  intervalMs = 3600_000,
): () => void {
  const run = () =>
    void pruneRecordings(dir, retentionDays).then(
      (removed) => removed > 0 && logger.log("info", "old recordings removed", { removed, retentionDays }),
      (error: unknown) => logger.log("warn", "recording cleanup failed", { error: errorMessage(error) }),
    );
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * One session's file. The header is written (and awaited) before the session's shell starts; then
 * each event is appended through a write stream whose errors (ENOSPC, EIO, EROFS, ...) fail the
 * recording instead of reaching the process, as does a write still pending after writeTimeoutMs
 * (a hung network volume). The stream's own buffer is the backpressure: output() returns false
 * past its high-water mark.
 */
class VolumeRecording extends RecordingBase {
  private readonly stream: WriteStream;
  private pendingSince: number | undefined;
  private readonly watchdog: NodeJS.Timeout;

  constructor(
    id: string,
    encoder: CastEncoder,
    file: string,
    private readonly writeTimeoutMs: number,
    private readonly failed: (stage: "session" | "end", error: Error) => void,
  ) {
    super(id, encoder);
    // 1 MiB of buffer before output pauses (the default 16 KiB would pause a bulk session at every burst).
    this.stream = createWriteStream(file, { flags: "a", mode: 0o640, highWaterMark: 1024 * 1024 });
    this.stream.on("error", (error) => this.failWith(error));
    this.stream.on("drain", () => this.drained());
    this.watchdog = setInterval(
      () => {
        if (this.pendingSince !== undefined && Date.now() - this.pendingSince > this.writeTimeoutMs) {
          this.failWith(new Error(`a write to the recording took longer than ${this.writeTimeoutMs} ms`));
        }
      },
      Math.max(50, Math.min(1000, this.writeTimeoutMs / 4)),
    );
    this.watchdog.unref();
  }

  private failWith(error: Error): void {
    if (this.failure) return;
    this.failed("session", error);
    this.fail(error);
  }

  private append(line: string): boolean {
    if (this.failure) return true;
    this.pendingSince ??= Date.now();
    return this.stream.write(line, (error) => {
      if (!error && this.stream.writableLength === 0) this.pendingSince = undefined;
    });
  }

  output(data: Buffer): boolean {
    return this.append(this.encoder.output(data));
  }

  resize(cols: number, rows: number): void {
    this.append(this.encoder.resize(cols, rows));
  }

  async finish(closeCode: string): Promise<void> {
    clearInterval(this.watchdog);
    if (this.failure) {
      this.stream.destroy();
      throw this.failure;
    }
    this.stream.write(this.encoder.end(closeCode));
    const ended = new Promise<void>((resolve, reject) => {
      this.stream.once("error", reject);
      this.stream.end(resolve);
    });
    try {
      await withDeadline(ended, this.writeTimeoutMs, "storing the end of the recording");
    } catch (error) {
      this.stream.destroy();
      const failure = error instanceof Error ? error : new Error(String(error));
      if (!this.failure) this.failed("end", failure);
      throw this.failure ?? failure;
    }
  }
}

/** The directory sink: one file per session in `config.recordDir`, pruned after recordRetentionDays. */
export function volumeSink(config: GatewayConfig, logger: Logger, metrics: Metrics): RecordingSink {
  const dir = config.recordDir;
  const failed = (stage: "start" | "session" | "end", error: Error) => {
    metrics.recordingFailures.inc({ sink: "volume", stage });
    logger.log("error", "recording write failed", { sink: "volume", stage, error: errorMessage(error) });
  };
  return {
    kind: "volume",
    async start(meta: RecordingMeta, size: TerminalSize): Promise<Recording> {
      const id = recordingId(new Date(), meta.session);
      const file = join(dir, `${id}.cast`);
      const encoder = new CastEncoder();
      // The header first, awaited: a volume that is full or gone refuses the session here, before a shell exists.
      const header = (async () => {
        await mkdir(dir, { recursive: true });
        const handle = await open(file, "wx", 0o640);
        try {
          await handle.writeFile(encoder.header(meta, size));
        } finally {
          await handle.close();
        }
      })();
      try {
        await withDeadline(header, config.recordWriteTimeoutMs, "writing the recording's header");
      } catch (error) {
        failed("start", error instanceof Error ? error : new Error(String(error)));
        await unlink(file).catch(() => {}); // an empty or cut header is no recording
        throw error;
      }
      const recording = new VolumeRecording(id, encoder, file, config.recordWriteTimeoutMs, failed);
      return recording;
    },
    list: () => listRecordings(dir),
    async get(id: string): Promise<StoredRecording | null> {
      const file = recordingFile(dir, id);
      const info = file ? await stat(file).catch(() => null) : null;
      if (!file || !info?.isFile()) return null;
      return { size: info.size, body: createReadStream(file) };
    },
    maintain: () =>
      config.recordRetentionDays > 0 ? startRecordingCleanup(dir, config.recordRetentionDays, logger) : () => {},
  };
}
