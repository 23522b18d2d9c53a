// The S3 sink (recordS3Bucket): each session's recording is one object, `<prefix><id>.cast`, in a
// bucket every replica shares, so any replica lists and serves any recording.
//
// Storing while the session runs, with a bounded loss when the gateway dies:
//  - S3 multipart parts are 5 MiB at least, except the last ("Part size: 5 MiB to 5 GiB. There is no
//    minimum size limit on the last part of your multipart upload", docs.aws.amazon.com/AmazonS3/
//    latest/userguide/qfacts.html), so output is uploaded as a part once recordPartBytes (>= 5 MiB)
//    of it is held;
//  - what is not in a part yet is checkpointed every recordFlushSeconds (when there is new output):
//    while the recording is shorter than a part, the whole of it is PUT as the object itself (so a
//    short recording is listed and replayable while it runs, and a gateway that dies leaves it there
//    without its END_EVENT: incomplete); once a multipart upload runs, the rest after its parts is
//    PUT as a "tail" object beside it, `<prefix>multipart-tails/<id>.cast`, whose metadata names
//    the upload and the byte offset where the tail starts, and which is rewritten at least every
//    6 x recordFlushSeconds while the session lives;
//  - every replica looks for tails older than 18 x recordFlushSeconds (their gateway is gone) and
//    completes those uploads: the parts, then the tail after them and an INCOMPLETE_EVENT as the last
//    part. So a gateway killed mid-session loses at most the output of its last recordFlushSeconds
//    (plus the time a write takes), or less than one part, whichever comes first.
// The whole upload is done here with the client's own multipart commands rather than
// @aws-sdk/lib-storage's Upload, which keeps its upload id and part list private and PUTs a body
// shorter than one part only when it ends ("Use put instead of multi-part for one chunk uploads",
// aws/aws-sdk-js-v3 lib/lib-storage/src/Upload.ts): a checkpoint needs both, and a short session
// would reach the bucket only at its end.
//
// The object's metadata (x-amz-meta-*) carries session, user, target and start (user and target
// URI-encoded: S3 user metadata is ASCII). Credentials come from the AWS SDK's default chain: the
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY variables (from a Secret), or the pod's identity
// (IRSA's AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE, instance or container roles); never a setting.
// Retention is the bucket's lifecycle rule (docs/exec-gateway.md shows one), not the gateway's.
import { hostname } from "node:os";
import type { Readable } from "node:stream";
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
  type Part,
} from "@aws-sdk/client-s3";
import { INCOMPLETE_EVENT, castEnding, recordingStart } from "../cast.js";
import type { GatewayConfig } from "../../config.js";
import { errorMessage, type Logger } from "../../log.js";
import type { Metrics } from "../../metrics.js";
import {
  CastEncoder,
  ENDING_BYTES,
  RecordingBase,
  event,
  recordingId,
  type Recording,
  type RecordingMeta,
  type RecordingSink,
  type RecordingSummary,
  type StoredRecording,
  type TerminalSize,
} from "../sink.js";

/** Where tails live, under the prefix (a "folder" the listing's delimiter keeps out of the recordings). */
export const TAILS = "multipart-tails/";
/** Recordings summarised at once by a listing (one ranged GET each). */
const LIST_CONCURRENCY = 8;
const CAST_TYPE = "application/x-asciicast";

/** A tail is rewritten at least this often (in flush intervals) while its session lives, and is stale after STALE_FLUSHES. */
export const HEARTBEAT_FLUSHES = 6;
export const STALE_FLUSHES = 18;

/** The client: a custom endpoint (S3-compatible servers) and path-style addressing when set; every request bounded by the write timeout. */
export function s3Client(config: GatewayConfig): S3Client {
  const timeout = config.recordWriteTimeoutMs;
  return new S3Client({
    region: config.recordS3Region || process.env.AWS_REGION || "us-east-1",
    forcePathStyle: config.recordS3ForcePathStyle,
    maxAttempts: 3,
    requestHandler: {
      connectionTimeout: Math.min(5000, timeout),
      requestTimeout: timeout,
      throwOnRequestTimeout: true,
    },
    ...(config.recordS3Endpoint
      ? {
          endpoint: config.recordS3Endpoint,
          // Since v3.729.0 the client adds CRC checksums to every upload by default, which several
          // S3-compatible servers refuse ("Announcement: S3 default integrity change",
          // aws/aws-sdk-js-v3#6810); for them, checksums only where an operation requires one.
          requestChecksumCalculation: "WHEN_REQUIRED" as const,
          responseChecksumValidation: "WHEN_REQUIRED" as const,
        }
      : {}),
  });
}

/** x-amz-meta-* of a recording. */
function objectMetadata(meta: RecordingMeta, start: Date): Record<string, string> {
  return {
    session: meta.session,
    user: encodeURIComponent(meta.user.slice(0, 512)),
    target: encodeURIComponent(meta.target.slice(0, 512)),
    start: start.toISOString(),
  };
}

function decoded(value: string | undefined): string {
  try {
    return value ? decodeURIComponent(value) : "";
  } catch {
    return "";
  }
}

/** The S3 error's name (NoSuchKey, NoSuchUpload, AccessDenied, ...), or "". */
function errorName(error: unknown): string {
  return (error as { name?: string; Code?: string })?.Code ?? (error as { name?: string })?.name ?? "";
}

interface S3Place {
  client: S3Client;
  bucket: string;
  prefix: string;
  timeoutMs: number;
  partBytes: number;
  flushMs: number;
  /** Times one write, by kind, and counts failures. */
  timed<T>(kind: "checkpoint" | "part" | "final", write: () => Promise<T>): Promise<T>;
  failed(stage: "start" | "session" | "end", error: Error): void;
  logger: Logger;
}

/** Per request: the overall deadline (retries included), besides the handler's own timeouts. */
const bounded = (place: S3Place) => ({ abortSignal: AbortSignal.timeout(place.timeoutMs) });

/**
 * One session's object. Output waits in `pending` (whole event lines); a pump, one write at a time,
 * uploads a part once pending reaches partBytes and checkpoints when the flush timer says so.
 */
class S3Recording extends RecordingBase {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the recording in uploaded parts (the tail starts there). */
  private storedBytes = 0;
  private readonly parts: CompletedPart[] = [];
  private uploadId: string | undefined;
  /** Bytes appended so far; a checkpoint is clean when nothing came in while it was written. */
  private appended = 0;
  private checkpointed = 0;
  private lastCheckpoint = Date.now();
  private checkpointDue = false;
  private running: Promise<void> | undefined;
  private finishing = false;
  private held = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    id: string,
    encoder: CastEncoder,
    private readonly place: S3Place,
    private readonly metadata: Record<string, string>,
    header: Buffer,
  ) {
    super(id, encoder);
    this.pending = [header];
    this.pendingBytes = this.appended = this.checkpointed = header.length;
    this.timer = setInterval(() => this.tick(), place.flushMs);
    this.timer.unref();
  }

  private get key(): string {
    return `${this.place.prefix}${this.id}.cast`;
  }

  private get tailKey(): string {
    return `${this.place.prefix}${TAILS}${this.id}.cast`;
  }

  output(data: Buffer): boolean {
    if (this.failure) return true;
    this.append(this.encoder.output(data));
    return !this.held;
  }

  resize(cols: number, rows: number): void {
    if (!this.failure) this.append(this.encoder.resize(cols, rows));
  }

  private append(line: string): void {
    const bytes = Buffer.from(line);
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.appended += bytes.length;
    if (this.pendingBytes >= this.place.partBytes) this.pump();
    // One part uploading and another one's worth waiting: the session pauses its output.
    if (this.pendingBytes >= 2 * this.place.partBytes) this.held = true;
  }

  private tick(): void {
    const heartbeat =
      this.uploadId !== undefined && Date.now() - this.lastCheckpoint >= HEARTBEAT_FLUSHES * this.place.flushMs;
    if (this.appended !== this.checkpointed || heartbeat) {
      this.checkpointDue = true;
      this.pump();
    }
  }

  private pump(): void {
    if (this.running || this.failure || this.finishing) return;
    this.running = this.run().finally(() => (this.running = undefined));
  }

  private async run(): Promise<void> {
    try {
      while (!this.failure && !this.finishing) {
        if (this.pendingBytes >= this.place.partBytes) await this.uploadPart(this.take());
        else if (this.checkpointDue) await this.checkpoint();
        else break;
      }
    } catch (error) {
      this.place.failed("session", error instanceof Error ? error : new Error(String(error)));
      this.fail(error);
    }
    if (this.held && this.pendingBytes < this.place.partBytes) {
      this.held = false;
      this.drained();
    }
  }

  private take(): Buffer {
    const body = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    return body;
  }

  private async uploadPart(body: Buffer, last = false): Promise<void> {
    const { client, bucket } = this.place;
    if (!this.uploadId) {
      const created = await client.send(
        new CreateMultipartUploadCommand({
          Bucket: bucket,
          Key: this.key,
          ContentType: CAST_TYPE,
          Metadata: this.metadata,
        }),
        bounded(this.place),
      );
      if (!created.UploadId) throw new Error("the bucket answered CreateMultipartUpload without an upload id");
      this.uploadId = created.UploadId;
    }
    const PartNumber = this.parts.length + 1;
    const uploaded = await this.place.timed(last ? "final" : "part", () =>
      client.send(
        new UploadPartCommand({ Bucket: bucket, Key: this.key, UploadId: this.uploadId, PartNumber, Body: body }),
        bounded(this.place),
      ),
    );
    if (!uploaded.ETag) throw new Error(`the bucket answered part ${PartNumber} without an ETag`);
    this.parts.push({ PartNumber, ETag: uploaded.ETag });
    this.storedBytes += body.length;
    // The tail object now starts elsewhere (or does not exist yet): write it at the next tick.
    this.checkpointed = -1;
  }

  /** PUTs what is not in a part: the whole object while there are no parts, else the tail beside it. */
  private async checkpoint(): Promise<void> {
    const { client, bucket } = this.place;
    const mark = this.appended;
    const body = Buffer.concat(this.pending);
    this.checkpointDue = false;
    const command = this.uploadId
      ? new PutObjectCommand({
          Bucket: bucket,
          Key: this.tailKey,
          Body: body,
          ContentType: CAST_TYPE,
          Metadata: {
            "upload-id": this.uploadId,
            offset: String(this.storedBytes),
            seconds: String(this.encoder.seconds()),
          },
        })
      : new PutObjectCommand({
          Bucket: bucket,
          Key: this.key,
          Body: body,
          ContentType: CAST_TYPE,
          Metadata: this.metadata,
        });
    await this.place.timed("checkpoint", () => client.send(command, bounded(this.place)));
    this.lastCheckpoint = Date.now();
    this.checkpointed = mark;
  }

  async finish(closeCode: string): Promise<void> {
    clearInterval(this.timer);
    this.finishing = true;
    while (this.running) await this.running;
    if (this.failure) throw this.failure;
    const { client, bucket } = this.place;
    const encoder = this.encoder;
    this.pending.push(Buffer.from(encoder.end(closeCode)));
    const body = Buffer.concat(this.pending);
    try {
      if (!this.uploadId) {
        await this.place.timed("final", () =>
          client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: this.key,
              Body: body,
              ContentType: CAST_TYPE,
              Metadata: this.metadata,
            }),
            bounded(this.place),
          ),
        );
        return;
      }
      await this.uploadPart(body, true);
      await this.place.timed("final", () =>
        client.send(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key: this.key,
            UploadId: this.uploadId,
            MultipartUpload: { Parts: this.parts },
          }),
          bounded(this.place),
        ),
      );
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      this.place.failed("end", failure);
      this.fail(failure);
      throw failure;
    }
    // The recording is whole; a tail left behind is removed by the next sweep (its upload is gone).
    await client
      .send(new DeleteObjectCommand({ Bucket: bucket, Key: this.tailKey }), bounded(this.place))
      .catch((error: unknown) => {
        this.place.logger.log("warn", "could not remove a recording's tail object", {
          recording: this.id,
          error: errorMessage(error),
        });
      });
  }
}

/** The whole body of an object, as bytes. */
export async function bodyBytes(body: unknown): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body as Readable) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export interface RecoveryResult {
  /** Uploads completed from their tails. */
  completed: string[];
  /** Tails removed whose upload had already ended. */
  removed: string[];
}

/**
 * Completes the multipart uploads whose tail was last written more than `staleMs` ago (their
 * gateway is gone): the parts, then the tail's bytes after them and an INCOMPLETE_EVENT as the last
 * part. Several replicas may do it at once: the one that loses finds the upload gone and removes
 * the tail, as it does for a tail whose session ended normally but whose removal failed.
 */
export async function recoverStoppedUploads(
  place: S3Place,
  staleMs: number,
  now = Date.now(),
): Promise<RecoveryResult> {
  const { client, bucket, prefix } = place;
  const result: RecoveryResult = { completed: [], removed: [] };
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}${TAILS}`, ContinuationToken: token }),
      bounded(place),
    );
    for (const object of page.Contents ?? []) {
      const id = object.Key?.slice(prefix.length + TAILS.length, -".cast".length) ?? "";
      if (!recordingStart(id) || (object.LastModified?.getTime() ?? now) > now - staleMs) continue;
      const tailKey = object.Key!;
      const key = `${prefix}${id}.cast`;
      const tail = await client.send(new GetObjectCommand({ Bucket: bucket, Key: tailKey }), bounded(place));
      const uploadId = tail.Metadata?.["upload-id"];
      const offset = Number(tail.Metadata?.offset);
      const seconds = Number(tail.Metadata?.seconds) || 0;
      const bytes = await bodyBytes(tail.Body);
      const removeTail = () => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: tailKey }), bounded(place));
      if (!uploadId || !Number.isFinite(offset)) {
        await removeTail();
        result.removed.push(id);
        continue;
      }
      try {
        const parts: Part[] = [];
        let marker: string | undefined;
        do {
          const listed = await client.send(
            new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }),
            bounded(place),
          );
          parts.push(...(listed.Parts ?? []));
          marker = listed.IsTruncated ? listed.NextPartNumberMarker : undefined;
        } while (marker);
        parts.sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
        // Parts are uploaded one after another: keep the run 1..m (a gap cannot be completed).
        const run = parts.filter((part, index) => part.PartNumber === index + 1);
        const stored = run.reduce((sum, part) => sum + (part.Size ?? 0), 0);
        const rest = bytes.subarray(Math.min(bytes.length, Math.max(0, stored - offset)));
        const marked = event(
          seconds,
          INCOMPLETE_EVENT,
          `the gateway recording this session stopped before its end; ${hostname()} finished the upload from its last checkpoint`,
        );
        const PartNumber = run.length + 1;
        const last = await client.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber,
            Body: Buffer.concat([rest, Buffer.from(marked)]),
          }),
          bounded(place),
        );
        const completed = [
          ...run.map((part) => ({ PartNumber: part.PartNumber, ETag: part.ETag })),
          { PartNumber, ETag: last.ETag },
        ];
        await client.send(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            MultipartUpload: { Parts: completed },
          }),
          bounded(place),
        );
        await removeTail();
        result.completed.push(id);
      } catch (error) {
        if (errorName(error) !== "NoSuchUpload") throw error;
        await removeTail();
        result.removed.push(id);
      }
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return result;
}

export function s3Sink(config: GatewayConfig, logger: Logger, metrics: Metrics): RecordingSink {
  const client = s3Client(config);
  const place: S3Place = {
    client,
    bucket: config.recordS3Bucket,
    prefix: config.recordS3Prefix,
    timeoutMs: config.recordWriteTimeoutMs,
    partBytes: config.recordPartBytes,
    flushMs: config.recordFlushSeconds * 1000,
    logger,
    async timed(kind, write) {
      const done = metrics.recordingWriteSeconds.startTimer({ sink: "s3", kind });
      const result = await write();
      done();
      return result;
    },
    failed(stage, error) {
      metrics.recordingFailures.inc({ sink: "s3", stage });
      // The SDK's error names the operation and the bucket's answer, never the credentials.
      logger.log("error", "recording write failed", {
        sink: "s3",
        stage,
        error: `${errorName(error)}: ${errorMessage(error)}`,
      });
    },
  };
  const { bucket, prefix } = place;

  async function summary(id: string): Promise<RecordingSummary | null> {
    try {
      const object = await client.send(
        new GetObjectCommand({ Bucket: bucket, Key: `${prefix}${id}.cast`, Range: `bytes=-${ENDING_BYTES}` }),
        bounded(place),
      );
      const size = Number(/\/(\d+)$/.exec(object.ContentRange ?? "")?.[1] ?? object.ContentLength ?? 0);
      const ending = castEnding((await bodyBytes(object.Body)).toString("utf8"));
      return {
        id,
        user: decoded(object.Metadata?.user),
        target: decoded(object.Metadata?.target),
        start: recordingStart(id)!.toISOString(),
        duration: ending.duration,
        size,
        complete: ending.complete,
      };
    } catch (error) {
      if (errorName(error) === "NoSuchKey") return null; // removed meanwhile (the lifecycle rule)
      throw error;
    }
  }

  return {
    kind: "s3",
    async start(meta: RecordingMeta, size: TerminalSize): Promise<Recording> {
      const start = new Date();
      const id = recordingId(start, meta.session);
      const encoder = new CastEncoder();
      const header = Buffer.from(encoder.header(meta, size));
      const metadata = objectMetadata(meta, start);
      try {
        // The header first, awaited: a bucket that refuses writes, or cannot be reached, refuses the session here.
        await place.timed("checkpoint", () =>
          client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: `${prefix}${id}.cast`,
              Body: header,
              ContentType: CAST_TYPE,
              Metadata: metadata,
            }),
            bounded(place),
          ),
        );
      } catch (error) {
        place.failed("start", error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
      return new S3Recording(id, encoder, place, metadata, header);
    },

    async list(): Promise<RecordingSummary[]> {
      const ids: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: "/", ContinuationToken: token }),
          bounded(place),
        );
        for (const object of page.Contents ?? []) {
          const name = object.Key?.slice(prefix.length) ?? "";
          if (name.endsWith(".cast") && recordingStart(name.slice(0, -5))) ids.push(name.slice(0, -5));
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      const summaries: RecordingSummary[] = [];
      for (let index = 0; index < ids.length; index += LIST_CONCURRENCY) {
        for (const found of await Promise.all(ids.slice(index, index + LIST_CONCURRENCY).map(summary)))
          if (found) summaries.push(found);
      }
      return summaries.sort((a, b) => b.start.localeCompare(a.start));
    },

    async get(id: string): Promise<StoredRecording | null> {
      try {
        // No overall deadline here: the body streams to the reviewer for as long as it takes (the
        // handler's requestTimeout still bounds the wait for the answer).
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}${id}.cast` }));
        return { size: Number(object.ContentLength ?? 0), body: object.Body as Readable };
      } catch (error) {
        if (errorName(error) === "NoSuchKey") return null;
        throw error;
      }
    },

    maintain(): () => void {
      const staleMs = STALE_FLUSHES * place.flushMs;
      let sweeping = false;
      const sweep = () => {
        if (sweeping) return;
        sweeping = true;
        recoverStoppedUploads(place, staleMs)
          .then(
            ({ completed, removed }) => {
              for (const recording of completed)
                logger.log("warn", "recording completed from its last checkpoint (its gateway stopped)", { recording });
              if (completed.length > 0) metrics.recordingsRecovered.inc(completed.length);
              if (removed.length > 0) logger.log("info", "stale recording tails removed", { removed: removed.length });
            },
            (error: unknown) =>
              logger.log("warn", "recovering stopped recordings failed", {
                error: `${errorName(error)}: ${errorMessage(error)}`,
              }),
          )
          .finally(() => (sweeping = false));
      };
      sweep();
      const timer = setInterval(sweep, HEARTBEAT_FLUSHES * place.flushMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
