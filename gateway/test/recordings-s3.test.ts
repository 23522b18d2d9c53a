// The S3 sink against a real S3 server (SeaweedFS, testkit/gateway/seaweedfs.ts), with gateways in this
// process on the in-memory backend: a recording is in the bucket while its session runs (its
// metadata names session, user, target and start), another gateway on the same bucket lists and
// serves it byte for byte, output past one part goes up as a multipart upload while the session runs,
// an upload whose gateway stopped is completed by a surviving replica from its tail and marked
// incomplete; and on storage failure (a bucket that refuses writes, an endpoint that hangs, one that
// goes away) the gateway refuses or ends the session with recording-failed, audits it, ends the
// shell, and keeps serving.
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { describeWithRealTool } from "../../testkit/harness/realcp.js";
import { castEnding, outputBytes, parseCast, type RecordingSummary } from "../src/recordings/cast.js";
import { defaultConfig, type GatewayConfig } from "../src/config.js";
import { createMetrics } from "../src/metrics.js";
import { bodyBytes, s3Client, STALE_FLUSHES, TAILS, type S3Place } from "../src/recordings/s3/place.js";
import { recoverStoppedUploads } from "../src/recordings/s3/recovery.js";
import { s3Sink } from "../src/recordings/s3/sink.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { fakeBackend, type FakeBackend } from "../../testkit/gateway/fake-backend.js";
import { startGateway, tokenAuthorizer, type TestGateway } from "../../testkit/gateway/gateway.js";
import { startSeaweedFs, type S3Identity, type SeaweedFs } from "../../testkit/gateway/seaweedfs.js";

const BUCKET = "session-casts";
const PART = 5 * 1024 * 1024;

describeWithRealTool("seaweedfs", "recordings in an S3 bucket (SeaweedFS)", (binDir) => {
  let weed: SeaweedFs;
  const gateways: TestGateway[] = [];
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeAll(async () => {
    weed = await startSeaweedFs(binDir, [BUCKET]);
  }, 300_000);
  afterEach(async () => {
    for (const gw of gateways.splice(0)) await gw.stop();
  });
  afterAll(async () => {
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    await weed?.stop();
  });

  /** The S3 settings of a gateway on the test bucket; credentials only from the environment, as in a pod. */
  const s3Settings = (overrides: Partial<GatewayConfig> = {}): Partial<GatewayConfig> => ({
    recordS3Bucket: BUCKET,
    recordS3Endpoint: weed.endpoint,
    recordS3ForcePathStyle: true,
    recordS3Prefix: "casts/",
    recordFlushSeconds: 0.3,
    recordWriteTimeoutMs: 5000,
    reviewerGroups: ["auditors"],
    ...overrides,
  });
  const asIdentity = (who: S3Identity) => {
    process.env.AWS_ACCESS_KEY_ID = who.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = who.secretAccessKey;
  };
  const gateway = async (backend: FakeBackend, who: S3Identity, overrides: Partial<GatewayConfig> = {}) => {
    asIdentity(who);
    const gw = await startGateway(backend, tokenAuthorizer(), s3Settings(overrides));
    gateways.push(gw);
    return gw;
  };
  const reviewer = { authorization: "Bearer user:rita:auditors" };
  const list = async (gw: TestGateway) =>
    (
      (await (await fetch(`${gw.base}/v1/recordings`, { headers: reviewer })).json()) as {
        recordings: RecordingSummary[];
      }
    ).recordings;
  const download = async (gw: TestGateway, id: string) =>
    Buffer.from(await (await fetch(`${gw.base}/v1/recordings/${id}`, { headers: reviewer })).arrayBuffer());
  const admin = () => weed.client(weed.admin);
  /** The gateway kept serving: once the bucket answers again, a session runs to its end. */
  const expectServingAgain = async (gw: TestGateway) => {
    const after = await EntryClient.connect(gw.url({ container: "web" }), { token: "user:alice" });
    after.type("exit 0\n");
    expect(await after.closed).toMatchObject({ exitCode: 0 });
  };

  it("records while the session runs, with its metadata; another replica lists it and serves every byte; the end event marks it complete", async () => {
    const a = await gateway(fakeBackend(), weed.gateway);
    const b = await gateway(fakeBackend(), weed.gateway);
    const client = await EntryClient.connect(a.url({ container: "web" }), { token: "user:alice" });
    client.type("hello from a\n");
    // Bytes that are not UTF-8 (a program writing raw bytes): echoed back, recorded exactly.
    client.type(Buffer.from([0x62, 0x69, 0x6e, 0xff, 0xfe, 0x80, 0x0a]));
    await client.waitFor(/hello from a/);
    await client.waitFor((c) => c.output.includes(Buffer.from([0xff, 0xfe, 0x80])));

    // While it runs: in the bucket (the checkpoint), listed by the other replica, not complete.
    let live: RecordingSummary | undefined;
    await expect.poll(async () => (live = (await list(b))[0])?.user, { timeout: 10_000 }).toBe("alice");
    expect(live).toMatchObject({ target: "fake/web", complete: false });
    const head = await admin().send(new HeadObjectCommand({ Bucket: BUCKET, Key: `casts/${live!.id}.cast` }));
    expect(head.Metadata).toMatchObject({ user: "alice", target: encodeURIComponent("fake/web"), start: live!.start });
    expect(head.Metadata!.session).toMatch(/^[0-9a-f-]{36}$/);
    expect(head.ContentType).toBe("application/x-asciicast");

    client.type("exit 0\n");
    expect(await client.closed).toMatchObject({ exitCode: 0 });
    await expect.poll(async () => (await list(b))[0]?.complete, { timeout: 10_000 }).toBe(true);
    const [summary] = await list(b);
    const fromB = await download(b, summary!.id);
    expect(await download(a, summary!.id)).toEqual(fromB);
    expect(summary!.size).toBe(fromB.length);
    const cast = parseCast(fromB.toString("utf8"));
    expect(cast.events.at(-1)).toMatchObject({ code: "entryway.end", data: "exit" });
    expect(Buffer.from(outputBytes(cast.events))).toEqual(client.output);
    expect(a.audit.map((e) => [e.event, e.recording])).toEqual([
      ["session.start", summary!.id],
      ["session.end", summary!.id],
    ]);
  });

  it("uploads output past one part as a multipart upload while the session runs, and completes it at the end", async () => {
    const backend = fakeBackend();
    const a = await gateway(backend, weed.gateway, { recordS3Prefix: "big/" });
    const client = await EntryClient.connect(a.url({ container: "bulk" }), { token: "user:alice", keepFrames: false });
    const line = `${"x".repeat(1023)}\n`;
    const chunk = line.repeat(60); // 60 kB, under maxFrameBytes
    const total = 6 * 1024 * 1024 + 100 * 1024;
    client.type("ready\n"); // a TTY keeps only 64 KiB typed before the shell runs
    await client.waitFor(/ready/);
    const before = client.outputBytes;
    for (let sent = 0; sent < total; sent += chunk.length) client.type(chunk);
    await client.waitFor((c) => c.outputBytes >= before + Math.ceil(total / chunk.length) * chunk.length, 60_000);

    // Part 1 is in the bucket and the tail beside it, while the session is still open.
    const client3 = admin();
    let uploadId: string | undefined;
    await expect
      .poll(
        async () =>
          (uploadId = (await client3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: "big/" })))
            .Uploads?.[0]?.UploadId),
        { timeout: 20_000 },
      )
      .toBeTruthy();
    const key = (await client3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: "big/" }))).Uploads![0]!
      .Key!;
    let parts: Awaited<ReturnType<typeof listParts>> | undefined;
    const listParts = () => client3.send(new ListPartsCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId }));
    await expect
      .poll(async () => (parts = await listParts()).Parts?.map((p) => p.PartNumber), { timeout: 20_000 })
      .toEqual([1]);
    expect(client.ws.readyState).toBe(client.ws.OPEN);
    expect(parts!.Parts![0]!.Size).toBeGreaterThanOrEqual(PART);
    await expect
      .poll(
        async () => (await client3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `big/${TAILS}` }))).KeyCount,
        { timeout: 10_000 },
      )
      .toBe(1);

    client.type("exit 0\n");
    await client.closed;
    await expect
      .poll(async () => (await list(a)).find((r) => r.target === "fake/bulk")?.complete, { timeout: 20_000 })
      .toBe(true);
    const metrics = await (await fetch(`${a.monitoring}/metrics`)).text();
    const figure = (name: string, kind: string) =>
      Number(
        new RegExp(`entryway_recording_write_seconds_${name}\\{sink="s3",kind="${kind}"\\} ([0-9.e-]+)`).exec(
          metrics,
        )?.[1],
      );
    expect(figure("count", "part")).toBe(1);
    process.stderr.write(
      `multipart: part 1 of ${parts!.Parts![0]!.Size} bytes uploaded in ${(figure("sum", "part") * 1000).toFixed(0)} ms; ${figure("count", "checkpoint")} checkpoints took ${((figure("sum", "checkpoint") / figure("count", "checkpoint")) * 1000).toFixed(1)} ms on average\n`,
    );
    const object = await client3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    const body = await bodyBytes(object.Body);
    expect(Buffer.from(outputBytes(parseCast(body.toString("utf8")).events))).toEqual(client.output);
    // The tail went with the end, and no upload is left open.
    expect((await client3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `big/${TAILS}` }))).KeyCount).toBe(0);
    expect(
      (await client3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: "big/" }))).Uploads ?? [],
    ).toEqual([]);
  }, 120_000);

  it("completes an upload whose gateway stopped from its tail, marked incomplete; the tail of one that ended is only removed", async () => {
    asIdentity(weed.gateway);
    const config = { ...defaultConfig, ...s3Settings({ recordS3Prefix: "stopped/" }) } as GatewayConfig;
    const logs: unknown[] = [];
    const sink = s3Sink(config, { log: (...entry) => logs.push(entry) }, createMetrics());
    const recording = await sink.start(
      { session: "00000000-0000-4000-8000-00000000000a", user: "alice", target: "ns/pod/app" },
      { cols: 80, rows: 24 },
    );
    const big = Buffer.from(`${"y".repeat(1023)}\n`.repeat(5 * 1024 + 10));
    recording.output(big);
    recording.output(Buffer.from("after the part\n"));
    const s3 = admin();
    await expect
      .poll(
        async () => (await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `stopped/${TAILS}` }))).KeyCount,
        { timeout: 20_000 },
      )
      .toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the tail holds the last line too
    // The gateway "stops" here: its recording is never finished. A replica sweeps once the tail is stale.
    const place: S3Place = {
      client: s3Client(config),
      bucket: BUCKET,
      prefix: "stopped/",
      timeoutMs: 5000,
      partBytes: PART,
      flushMs: 300,
      logger: { log: () => {} },
      timed: (_kind, write) => write(),
      failed: () => {},
    };
    const early = await recoverStoppedUploads(place, STALE_FLUSHES * 300);
    expect(early).toEqual({ completed: [], removed: [] }); // still fresh: its session might live
    const swept = await recoverStoppedUploads(place, 0, Date.now() + 60_000);
    expect(swept).toEqual({ completed: [recording.id], removed: [] });
    const object = await bodyBytes(
      (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `stopped/${recording.id}.cast` }))).Body,
    );
    const cast = parseCast(object.toString("utf8"));
    expect(cast.events.at(-1)).toMatchObject({ code: "entryway.incomplete" });
    expect(castEnding(object.subarray(-4096).toString("utf8")).complete).toBe(false);
    expect(Buffer.from(outputBytes(cast.events))).toEqual(Buffer.concat([big, Buffer.from("after the part\n")]));
    expect((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `stopped/${TAILS}` }))).KeyCount).toBe(0);
    // The stopped recording's own finish now finds its upload gone.
    await expect(recording.finish("exit")).rejects.toThrow();
    // A tail left behind by a session that ended (its removal failed) is only removed.
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `stopped/${TAILS}${recording.id}.cast`,
        Body: "x",
        Metadata: { "upload-id": "gone", offset: "0", seconds: "1" },
      }),
    );
    expect(await recoverStoppedUploads(place, 0, Date.now() + 60_000)).toEqual({
      completed: [],
      removed: [recording.id],
    });
  }, 120_000);

  it("refuses a session before any shell exists when the bucket refuses writes, and says why", async () => {
    const backend = fakeBackend();
    const gw = await gateway(backend, weed.reader);
    const client = await EntryClient.connect(gw.url({ container: "web" }), { token: "user:alice" });
    const closed = await client.closed;
    expect(closed).toMatchObject({ closeCode: "recording-failed" });
    expect(closed.reason).toMatch(/^the session's recording cannot be written, so the session is refused/);
    expect(backend.execs).toBe(0);
    expect(gw.audit.map((e) => [e.event, e.closeCode])).toEqual([["session.refused", "recording-failed"]]);
    expect(gw.logs.find((l) => l.msg === "recording write failed")).toMatchObject({
      sink: "s3",
      stage: "start",
      error: expect.stringMatching(/AccessDenied/),
    });
    expect(JSON.stringify(gw.logs)).not.toContain(weed.reader.secretAccessKey);
    expect(await (await fetch(`${gw.monitoring}/metrics`)).text()).toMatch(
      /entryway_recording_failures_total\{sink="s3",stage="start"\} 1/,
    );
  });

  it("ends a session whose bucket stops answering (a hung endpoint) within the write timeout, ends its shell, and refuses new ones until it answers", async () => {
    const backend = fakeBackend();
    const gw = await gateway(backend, weed.gateway, { recordWriteTimeoutMs: 1500 });
    const client = await EntryClient.connect(gw.url({ container: "web" }), { token: "user:alice" });
    client.type("before the hang\n");
    await client.waitFor(/before the hang/);
    weed.process.kill("SIGSTOP");
    try {
      const started = Date.now();
      client.type("during the hang\n");
      const closed = await client.closed;
      expect(closed).toMatchObject({ closeCode: "recording-failed" });
      expect(Date.now() - started).toBeLessThan(1500 * 3 + 2000);
      expect(backend.reaped).toHaveLength(1); // the shell was ended
      expect(gw.audit.map((e) => [e.event, e.closeCode])).toEqual([
        ["session.start", undefined],
        ["session.end", "recording-failed"],
      ]);
      const next = await EntryClient.connect(gw.url({ container: "web" }), { token: "user:alice" });
      expect(await next.closed).toMatchObject({ closeCode: "recording-failed" });
      expect(backend.execs).toBe(1);
    } finally {
      weed.process.kill("SIGCONT");
    }
    await expectServingAgain(gw);
  }, 60_000);

  it("a client that leaves while its recording's header is being stored starts no shell and leaves a finished recording", async () => {
    const backend = fakeBackend();
    const gw = await gateway(backend, weed.gateway, { recordS3Prefix: "left/" });
    weed.process.kill("SIGSTOP");
    try {
      const client = await EntryClient.connect(gw.url({ container: "web" }), { token: "user:alice" });
      await new Promise((resolve) => setTimeout(resolve, 300)); // the header's PUT is waiting on the stopped server
      client.ws.close();
      await client.closed;
      await expect
        .poll(() => gw.audit.map((e) => [e.event, e.closeCode]))
        .toEqual([["session.refused", "client-gone"]]);
    } finally {
      weed.process.kill("SIGCONT");
    }
    let found: RecordingSummary | undefined;
    await expect
      .poll(async () => (found = (await list(gw)).find((r) => r.user === "alice"))?.complete, { timeout: 10_000 })
      .toBe(true);
    expect(parseCast((await download(gw, found!.id)).toString("utf8")).events).toEqual([
      expect.objectContaining({ code: "entryway.end", data: "client-gone" }),
    ]);
    expect(backend.execs).toBe(0);
  }, 60_000);

  it("ends a session whose endpoint goes away, and serves again once it is back", async () => {
    const backend = fakeBackend();
    const gw = await gateway(backend, weed.gateway, { recordWriteTimeoutMs: 3000 });
    const client = await EntryClient.connect(gw.url({ container: "web" }), { token: "user:alice" });
    client.type("before\n");
    await client.waitFor(/before/);
    await weed.kill();
    try {
      client.type("gone\n");
      expect(await client.closed).toMatchObject({ closeCode: "recording-failed" });
      expect(backend.reaped).toHaveLength(1);
      expect(gw.audit.at(-1)).toMatchObject({ event: "session.end", closeCode: "recording-failed" });
      expect((await fetch(`${gw.base}/v1/recordings`, { headers: reviewer })).status).toBe(503);
    } finally {
      await weed.restart();
    }
    await expectServingAgain(gw);
  }, 180_000);
});
