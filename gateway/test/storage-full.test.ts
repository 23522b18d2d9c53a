// Full storage, tried as an operator would: `entryway serve` (Docker backend on a private podman,
// webhook authorizer on loopback) records to a 1 MiB tmpfs, or to a SeaweedFS bucket with a 1 MB
// quota, and 100 sessions of 40 kB of output each overflow it. The gateway process survives, every
// session gets its closing audit record (session.end, or session.refused when it was refused before
// a shell existed), those whose recording failed say recording-failed, no shell is left in the
// container, and a bystander session that was open all along keeps working.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithRealTool } from "../../testkit/harness/realcp.js";
import { EntryClient, type Closed } from "../../testkit/gateway/client.js";
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
import { describeNeeding } from "../../testkit/gateway/tools.js";

/** 40 kB of output, then a line, in pipe mode: one session that overflows a little more of the storage. */
const FLOOD = ["sh", "-c", "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 40000; echo; echo flood-done"];
const SESSIONS = 100;
const AT_ONCE = 10;

interface AuditRecord {
  event: string;
  session: string;
  user?: string;
  closeCode?: string;
  reason?: string;
}

function auditRecords(file: string): AuditRecord[] {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditRecord);
}

/** Waits (up to 30 s) until `user`'s audit records, as [event, closeCode] pairs, are `outcomes`. */
async function expectOutcomes(file: string, user: string, outcomes: [string, string | undefined][]): Promise<void> {
  await expect
    .poll(
      () =>
        auditRecords(file)
          .filter((r) => r.user === user)
          .map((r) => [r.event, r.closeCode]),
      { timeout: 30_000 },
    )
    .toEqual(outcomes);
}

/** The audit records once every flood session's closing record is there (a client sees CLOSE before its shell is ended and the record written). */
async function closingRecords(file: string): Promise<AuditRecord[]> {
  const closing = () =>
    auditRecords(file).filter((r) => r.user === "alice" && (r.event === "session.end" || r.event === "session.refused"))
      .length;
  await expect.poll(closing, { timeout: 30_000 }).toBeGreaterThanOrEqual(SESSIONS);
  return auditRecords(file);
}

/** Runs the flood: SESSIONS sessions, AT_ONCE at a time; returns how each one closed. */
async function flood(serve: ServeProcess, container: string): Promise<Closed[]> {
  const closed: Closed[] = [];
  for (let started = 0; started < SESSIONS; started += AT_ONCE) {
    const batch = await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        const client = await EntryClient.connect(enterUrl(serve, container, FLOOD), {
          token: "user:alice",
          keepFrames: false,
        });
        client.eof();
        return client.closed;
      }),
    );
    closed.push(...batch);
  }
  return closed;
}

/** What every overflow test checks after the flood, given the audit records and the clients' view. */
/** bob's session, running before the flood: it must outlive it. Its shells are the container's shells with it. */
async function startBystander(
  serve: ServeProcess,
  podman: Podman,
  container: string,
): Promise<{ bystander: EntryClient; bystanderShells: string[] }> {
  const bystander = await EntryClient.connect(enterUrl(serve, container), { token: "user:bob" });
  bystander.type("echo bystander-$((20+1))\n");
  await bystander.waitFor(/bystander-21/);
  return { bystander, bystanderShells: await podman.shells(container) };
}

async function expectSurvived(serve: ServeProcess, records: AuditRecord[], closed: Closed[]): Promise<void> {
  expect(serve.process.exitCode).toBeNull();
  expect((await fetch(`${serve.base}/healthz`)).status).toBe(200);
  const alice = records.filter((r) => r.user === "alice");
  const closing = alice.filter((r) => r.event === "session.end" || r.event === "session.refused");
  expect(closing).toHaveLength(SESSIONS);
  // Every session that started has its end; none ended twice.
  const started = new Set(alice.filter((r) => r.event === "session.start").map((r) => r.session));
  const ended = new Set(alice.filter((r) => r.event === "session.end").map((r) => r.session));
  expect([...started].sort()).toEqual([...ended].sort());
  // Each client saw the close code its audit record has.
  const byCode = (codes: (string | undefined)[]) =>
    codes.reduce<Record<string, number>>((n, code) => ({ ...n, [code ?? "exit"]: (n[code ?? "exit"] ?? 0) + 1 }), {});
  expect(byCode(closed.map((c) => c.closeCode))).toEqual(byCode(closing.map((r) => r.closeCode)));
  process.stderr.write(
    `${SESSIONS} overflowing sessions closed as ${JSON.stringify(byCode(closing.map((r) => `${r.event} ${r.closeCode}`)))}\n`,
  );
  const failed = closing.filter((r) => r.closeCode === "recording-failed");
  expect(failed.length).toBeGreaterThan(0);
  for (const record of failed)
    expect(record.reason).toMatch(
      /^the session's recording (cannot|could not) be written, so the session is (refused|ended)/,
    );
  expect(closing.every((r) => r.closeCode === "exit" || r.closeCode === "recording-failed")).toBe(true);
}

describeNeeding(
  { podman: podmanAvailable(), root: process.getuid?.() === 0 },
  "a full recording volume (1 MiB tmpfs) under 100 overflowing sessions",
  () => {
    let podman: Podman;
    let webhook: WebhookAuthorizer;
    let serve: ServeProcess;
    let dir: string;
    let recordDir: string;
    let container: string;

    beforeAll(async () => {
      podman = await startPodman();
      container = await podman.startContainer("tmpfs-full-box");
      webhook = await startWebhookAuthorizer();
      dir = mkdtempSync(join(tmpdir(), "entryway-tmpfs-full-"));
      recordDir = join(dir, "casts");
      mkdirSync(recordDir);
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", recordDir]);
      serve = await startServe({
        ...dockerWithWebhook(podman, webhook),
        ENTRYWAY_AUDIT_FILE: join(dir, "audit.jsonl"),
        ENTRYWAY_RECORD_DIR: recordDir,
        ENTRYWAY_MAX_SESSIONS_PER_USER: String(SESSIONS),
        ENTRYWAY_REAP_GRACE_SECONDS: "1",
        ENTRYWAY_LOG_LEVEL: "info",
      });
    }, 300_000);
    afterAll(async () => {
      await serve?.stop(true);
      await webhook?.stop();
      if (recordDir) execFileSync("umount", [recordDir], { stdio: "ignore" });
      if (dir) rmSync(dir, { recursive: true, force: true });
      await podman?.stop();
    }, 120_000);

    it("survives, audits every session, leaves no shell, and keeps the bystander's session", async () => {
      const { bystander, bystanderShells } = await startBystander(serve, podman, container);

      const closed = await flood(serve, container);
      const records = await closingRecords(join(dir, "audit.jsonl"));
      await expectSurvived(serve, records, closed);
      expect(
        execFileSync("df", ["--output=avail", "-B1", recordDir], { encoding: "utf8" }).split("\n")[1]!.trim(),
      ).toBe("0");
      await expect.poll(() => podman.shells(container), { timeout: 30_000 }).toEqual(bystanderShells);

      // The bystander was open all along, and its next output still fits its file's last page.
      bystander.type("echo still-$((40+2))\n");
      await bystander.waitFor(/still-42/);
      const [bystanderFile] = readdirSync(recordDir).filter((name) =>
        readFileSync(join(recordDir, name), "utf8").includes('"user":"bob"'),
      );
      await expect.poll(() => readFileSync(join(recordDir, bystanderFile!), "utf8")).toContain("still-42");

      // A new session needs a new file, which a full volume refuses: before a shell exists.
      const late = await EntryClient.connect(enterUrl(serve, container, ["echo", "never"]), { token: "user:carol" });
      expect(await late.closed).toMatchObject({ closeCode: "recording-failed" });
      expect(late.text).not.toContain("never");
      await expectOutcomes(join(dir, "audit.jsonl"), "carol", [["session.refused", "recording-failed"]]);

      bystander.type("exit 3\n");
      expect(await bystander.closed).toMatchObject({ exitCode: 3 });
      await expect.poll(() => podman.shells(container), { timeout: 30_000 }).toEqual([]);
      expect(serve.stdout()).toContain('"msg":"recording write failed"');
    }, 600_000);
  },
);

describeWithRealTool("seaweedfs", "a SeaweedFS bucket over its 1 MB quota under 100 overflowing sessions", (binDir) => {
  let weed: SeaweedFs;
  let podman: Podman;
  let webhook: WebhookAuthorizer;
  let serve: ServeProcess;
  let dir: string;
  let container: string;
  let enforcing: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    weed = await startSeaweedFs(binDir, ["quota-casts"]);
    await weed.setQuota("quota-casts", 1);
    podman = await startPodman();
    container = await podman.startContainer("quota-full-box");
    webhook = await startWebhookAuthorizer();
    dir = mkdtempSync(join(tmpdir(), "entryway-quota-full-"));
    serve = await startServe({
      ...dockerWithWebhook(podman, webhook),
      ENTRYWAY_AUDIT_FILE: join(dir, "audit.jsonl"),
      ...recordingToBucket(weed, "quota-casts"),
      ENTRYWAY_RECORD_FLUSH_SECONDS: "0.5",
      ENTRYWAY_RECORD_WRITE_TIMEOUT_MS: "10000",
      ENTRYWAY_MAX_SESSIONS_PER_USER: String(SESSIONS),
      ENTRYWAY_REAP_GRACE_SECONDS: "1",
      ENTRYWAY_LOG_LEVEL: "info",
    });
  }, 600_000);
  afterAll(async () => {
    clearInterval(enforcing);
    await serve?.stop(true);
    await webhook?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await podman?.stop();
    await weed?.stop();
  }, 120_000);

  it("survives, audits every session, leaves no shell, and keeps the bystander's session until its own write is refused", async () => {
    const { bystander, bystanderShells } = await startBystander(serve, podman, container);

    // SeaweedFS's own quota enforcement (its S3 server runs it each minute): the bucket turns read-only once over.
    let readOnly = false;
    const enforce = () =>
      void weed.shell("s3.bucket.quota.enforce -apply").then(
        (out) => (readOnly ||= /readOnly=true|read.?only/i.test(out)),
        () => {},
      );
    enforcing = setInterval(enforce, 1000);
    const closed = await flood(serve, container);
    const records = await closingRecords(join(dir, "audit.jsonl"));
    await expectSurvived(serve, records, closed);
    expect(readOnly).toBe(true);
    await expect.poll(() => podman.shells(container), { timeout: 30_000 }).toEqual(bystanderShells);

    // The bystander was open all along; its next checkpoint is refused by the read-only bucket, so the policy ends it.
    expect(bystander.ws.readyState).toBe(bystander.ws.OPEN);
    bystander.type("echo after-$((40+2))\n");
    expect(await bystander.closed).toMatchObject({ closeCode: "recording-failed" });
    // The record comes once the shell is ended (after the client's CLOSE).
    await expectOutcomes(join(dir, "audit.jsonl"), "bob", [
      ["session.start", undefined],
      ["session.end", "recording-failed"],
    ]);
    await expect.poll(() => podman.shells(container), { timeout: 30_000 }).toEqual([]);
  }, 900_000);
});
