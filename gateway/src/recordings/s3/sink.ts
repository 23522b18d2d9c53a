// The S3 sink (recordS3Bucket): starts each session's recording (upload.ts), lists and serves the
// recordings of the bucket, and sweeps for stopped uploads (recovery.ts).
import type { Readable } from "node:stream";
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import type { GatewayConfig } from "../../config.js";
import { errorMessage, type Logger } from "../../log.js";
import type { Metrics } from "../../metrics.js";
import { castEnding, recordingStart, type RecordingSummary } from "../cast.js";
import {
  CastEncoder,
  ENDING_BYTES,
  recordingId,
  type Recording,
  type RecordingMeta,
  type RecordingSink,
  type StoredRecording,
  type TerminalSize,
} from "../sink.js";
import {
  bodyBytes,
  bounded,
  CAST_TYPE,
  decoded,
  errorName,
  HEARTBEAT_FLUSHES,
  LIST_CONCURRENCY,
  objectMetadata,
  s3Client,
  STALE_FLUSHES,
  type S3Place,
} from "./place.js";
import { S3Recording } from "./upload.js";
import { recoverStoppedUploads } from "./recovery.js";

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
