// Where the S3 sink writes: the client, the bucket and prefix with the sink's settings (S3Place),
// and the small helpers every part of the sink uses (metadata, error names, bodies).
import type { Readable } from "node:stream";
import { S3Client } from "@aws-sdk/client-s3";
import type { GatewayConfig } from "../../config.js";
import type { Logger } from "../../log.js";
import type { RecordingMeta } from "../sink.js";

/** Where tails live, under the prefix (a "folder" the listing's delimiter keeps out of the recordings). */
export const TAILS = "multipart-tails/";
/** Recordings summarised at once by a listing (one ranged GET each). */
export const LIST_CONCURRENCY = 8;
export const CAST_TYPE = "application/x-asciicast";

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
export function objectMetadata(meta: RecordingMeta, start: Date): Record<string, string> {
  return {
    session: meta.session,
    user: encodeURIComponent(meta.user.slice(0, 512)),
    target: encodeURIComponent(meta.target.slice(0, 512)),
    start: start.toISOString(),
  };
}

export function decoded(value: string | undefined): string {
  try {
    return value ? decodeURIComponent(value) : "";
  } catch {
    return "";
  }
}

/** The S3 error's name (NoSuchKey, NoSuchUpload, AccessDenied, ...), or "". */
export function errorName(error: unknown): string {
  return (error as { name?: string; Code?: string })?.Code ?? (error as { name?: string })?.name ?? "";
}

export interface S3Place {
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
export const bounded = (place: S3Place) => ({ abortSignal: AbortSignal.timeout(place.timeoutMs) });

/** The whole body of an object, as bytes. */
export async function bodyBytes(body: unknown): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body as Readable) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
