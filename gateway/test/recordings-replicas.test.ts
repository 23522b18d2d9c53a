// Two gateway replicas sharing one bucket, as two `entryway serve` processes on loopback (Docker
// backend on a private podman, webhook authorizer, SeaweedFS as the bucket; credentials only in
// AWS_* variables): a session recorded on one is listed and replayed, byte for byte, through the
// other (`entryway replay --bytes`); and `kill -9` of the recording replica mid-session leaves the
// recording in the bucket, marked incomplete and missing at most recordFlushSeconds of output (plus
// one write), both for a short recording (its last checkpoint is the object) and for one past a
// multipart part (the other replica completes the upload from its tail).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithRealTool } from "../../testkit/harness/realcp.js";
import { outputBytes, parseCast, type RecordingSummary } from "../src/recordings/cast.js";
import { cleanEnv, runCli } from "../../testkit/gateway/cli-harness.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { podmanAvailable, startPodman, type Podman } from "../../testkit/gateway/podman.js";
import { recordingToBucket, startSeaweedFs, type SeaweedFs } from "../../testkit/gateway/seaweedfs.js";
import {
  dockerWithWebhook,
  enterUrl,
  startServe,
  startWebhookAuthorizer,
  type ServeProcess,
  type WebhookAuthorizer,
} from "../../testkit/gateway/serve.js";

const BUCKET = "replica-casts";
const FLUSH_SECONDS = 1;
const REVIEWER = "user:rita:auditors";
/** Prints tick-<n> five times a second, for ever. */
const TICKS = "i=0; while true; do echo tick-$i; i=$((i+1)); sleep 0.2; done";

if (!podmanAvailable()) throw new Error("podman, runc and busybox-static are required (see .ci/apt-packages.txt)");

describeWithRealTool("seaweedfs", "two gateway replicas sharing one bucket", (binDir) => {
  let weed: SeaweedFs;
  let podman: Podman;
  let webhook: WebhookAuthorizer;
  let dir: string;
  let container: string;
  const replicas: ServeProcess[] = [];

  const replica = async (name: string) => {
    const serve = await startServe({
      ...dockerWithWebhook(podman, webhook),
      ENTRYWAY_AUDIT_FILE: join(dir, `${name}-audit.jsonl`),
      ...recordingToBucket(weed, BUCKET),
      ENTRYWAY_RECORD_S3_PREFIX: "sessions/",
      ENTRYWAY_RECORD_FLUSH_SECONDS: String(FLUSH_SECONDS),
      ENTRYWAY_REVIEWER_GROUPS: '["auditors"]',
      ENTRYWAY_LOG_LEVEL: "info",
    });
    replicas.push(serve);
    return serve;
  };
  const list = async (serve: ServeProcess) =>
    (
      (await (
        await fetch(`${serve.base}/v1/recordings`, { headers: { authorization: `Bearer ${REVIEWER}` } })
      ).json()) as { recordings: RecordingSummary[] }
    ).recordings;
  const download = async (serve: ServeProcess, id: string) =>
    Buffer.from(
      await (
        await fetch(`${serve.base}/v1/recordings/${id}`, { headers: { authorization: `Bearer ${REVIEWER}` } })
      ).arrayBuffer(),
    );

  /**
   * When the client first saw each tick-<n> (ms since the epoch), polled every 20 ms; `scan` looks
   * once more at once (before the kill: a tick that came in since the last poll, as the one the
   * test waited for can, is counted as seen by then, not missed).
   */
  const watchTicks = (client: EntryClient) => {
    const seen = new Map<number, number>();
    const scan = () => {
      for (const match of client.text.matchAll(/tick-(\d+)\r?\n/g))
        if (!seen.has(Number(match[1]))) seen.set(Number(match[1]), Date.now());
    };
    const timer = setInterval(scan, 20);
    return {
      seen,
      scan,
      stop: () => {
        clearInterval(timer);
        scan();
      },
    };
  };
  const lastTick = (text: string) => Math.max(-1, ...[...text.matchAll(/tick-(\d+)\r?\n/g)].map((m) => Number(m[1])));

  beforeAll(async () => {
    weed = await startSeaweedFs(binDir, [BUCKET]);
    podman = await startPodman();
    container = await podman.startContainer("replica-box");
    webhook = await startWebhookAuthorizer();
    dir = mkdtempSync(join(tmpdir(), "entryway-replicas-"));
  }, 600_000);
  afterAll(async () => {
    for (const serve of replicas) await serve.stop(true);
    await webhook?.stop();
    await podman?.stop();
    await weed?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it("a session recorded on one replica is listed and replayed, byte for byte, through the other", async () => {
    const [a, b] = [await replica("a"), await replica("b")];
    // Pipe mode: UTF-8, bytes that are not UTF-8, and a NUL, exactly as the program wrote them.
    const program = "printf 'caf\\303\\251 \\377\\376\\000 raw\\n'; echo done";
    const client = await EntryClient.connect(enterUrl(a, container, ["sh", "-c", program]), { token: "user:alice" });
    client.eof();
    expect(await client.closed).toMatchObject({ exitCode: 0 });
    expect(client.output).toEqual(
      Buffer.concat([Buffer.from("caf\u00e9 "), Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(" raw\ndone\n")]),
    );

    await expect
      .poll(async () => (await list(b)).find((r) => r.user === "alice")?.complete, { timeout: 20_000 })
      .toBe(true);
    const recording = (await list(b)).find((r) => r.user === "alice")!;
    expect(recording.target).toBe("docker/replica-box");
    expect(await download(a, recording.id)).toEqual(await download(b, recording.id));

    const home = mkdtempSync(join(dir, "home-"));
    const replayed = await runCli(["replay", "--bytes", recording.id], {
      env: cleanEnv(home, { ENTRYWAY_GATEWAY: b.base, ENTRYWAY_TOKEN: REVIEWER }),
    });
    expect(replayed.code).toBe(0);
    expect(replayed.output).toEqual(client.output);
    const stdout = a.stdout() + b.stdout();
    expect(stdout).not.toContain(weed.gateway.secretAccessKey);
  }, 180_000);

  it.each([
    ["a short recording (its last checkpoint is the object)", "", 0],
    [
      "one past a multipart part (the other replica completes it from its tail)",
      "yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 6500000; ",
      6_500_000,
    ],
  ])(
    "kill -9 of the recording replica mid-session leaves %s, marked incomplete, missing at most the flush interval",
    async (_name, before, bulk) => {
      const [a, b] = [await replica(`kill-a-${bulk}`), await replica(`kill-b-${bulk}`)];
      const client = await EntryClient.connect(enterUrl(a, container), {
        token: `user:killed-${bulk}`,
        keepFrames: false,
      });
      client.type(`${before}${TICKS}\n`);
      const ticks = watchTicks(client);
      await client.waitFor(/tick-25\r\n/, 120_000);
      ticks.scan();
      a.process.kill("SIGKILL");
      const killedAt = Date.now();
      await client.closed;
      ticks.stop();
      const sent = lastTick(client.text);

      // The other replica lists it: a short one at once; a multipart one once its tail is stale and the sweep completed it.
      let recording: RecordingSummary | undefined;
      await expect
        .poll(async () => (recording = (await list(b)).find((r) => r.user === `killed-${bulk}`))?.size ?? 0, {
          timeout: 90_000,
          interval: 1000,
        })
        .toBeGreaterThan(bulk);
      const cast = parseCast((await download(b, recording!.id)).toString("utf8"));
      expect(recording!.complete).toBe(false);
      expect(cast.events.some((e) => e.code === "entryway.end")).toBe(false);
      if (bulk > 0) expect(cast.events.at(-1)).toMatchObject({ code: "entryway.incomplete" });
      const recorded = Buffer.from(outputBytes(cast.events));
      const kept = lastTick(recorded.toString("utf8"));
      // What was recorded is exactly what the client saw, up to the last checkpoint.
      expect(client.output.subarray(0, recorded.length)).toEqual(recorded);
      // How long the oldest output the recording lacks had been out when the gateway died (0: none was).
      const lostMs = kept >= sent ? 0 : Math.max(0, killedAt - ticks.seen.get(kept + 1)!);
      process.stderr.write(
        `kill -9 (${bulk} bytes first): client saw tick-${sent}, recording kept tick-${kept}: ${lostMs} ms of output lost (flush ${FLUSH_SECONDS} s)\n`,
      );
      expect(kept).toBeGreaterThanOrEqual(0);
      expect(lostMs).toBeLessThanOrEqual(FLUSH_SECONDS * 1000 + 1500);
      // Completed by a surviving replica's sweep (every replica on the bucket sweeps; the first one does it).
      if (bulk > 0)
        expect(replicas.map((r) => r.stdout()).join("")).toContain(
          `"msg":"recording completed from its last checkpoint (its gateway stopped)","recording":"${recording!.id}"`,
        );
    },
    300_000,
  );
});
