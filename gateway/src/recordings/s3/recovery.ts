// The recovery of stopped uploads: every replica completes the multipart uploads whose gateway
// stopped, from their tails (see upload.ts for the protocol).
import { hostname } from "node:os";
import {
  CompleteMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  UploadPartCommand,
  type Part,
} from "@aws-sdk/client-s3";
import { INCOMPLETE_EVENT, recordingStart } from "../cast.js";
import { event } from "../sink.js";
import { bodyBytes, bounded, errorName, TAILS, type S3Place } from "./place.js";

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
