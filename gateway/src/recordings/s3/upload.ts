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
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
} from "@aws-sdk/client-s3";
import { errorMessage } from "../../log.js";
import { CastEncoder, RecordingBase } from "../sink.js";
import { bounded, CAST_TYPE, HEARTBEAT_FLUSHES, TAILS, type S3Place } from "./place.js";

/**
 * One session's object. Output waits in `pending` (whole event lines); a pump, one write at a time,
 * uploads a part once pending reaches partBytes and checkpoints when the flush timer says so.
 */
export class S3Recording extends RecordingBase {
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
