// Recordings: the header names session, user and target; ids are checked strictly; recordings
// older than the retention go (mtime set back with utimes), at start-up and on the hourly timer;
// GET /v1/recordings[/<id>] serves them to reviewers only (401 without a token, 403 otherwise),
// never a file outside the directory, and audits every answer.
import http from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultConfig } from "../src/config.js";
import { createMetrics } from "../src/metrics.js";
import {
  listRecordings,
  pruneRecordings,
  recordingFile,
  startRecordingCleanup,
  volumeSink,
} from "../src/recordings/volume.js";
import { outputBytes, parseCast } from "../src/recordings/cast.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { fakeBackend } from "../../testkit/gateway/fake-backend.js";
import { startGateway, tokenAuthorizer } from "../../testkit/gateway/gateway.js";

const DAY = 24 * 3600 * 1000;
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "entryway-recordings-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  vi.useRealTimers();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A recording file as the directory sink names it, last written `ageDays` ago. */
function castFile(dir: string, start: Date, session: string, ageDays: number, now = Date.now()): string {
  const id = `${start.toISOString().replace(/[:.]/g, "-")}-${session}`;
  const file = join(dir, `${id}.cast`);
  writeFileSync(
    file,
    JSON.stringify({ version: 2, width: 80, height: 24, title: "c", entryway: { session, user: "u", target: "c" } }) +
      "\n",
  );
  const mtime = new Date(now - ageDays * DAY);
  utimesSync(file, mtime, mtime);
  return id;
}

describe("recordings", () => {
  it("writes a header naming the session, its user and target, every output byte and an end event, and lists it", async () => {
    const dir = tempDir();
    const session = "0b7d5a1e-2c3f-4d5e-8f90-123456789abc";
    const sink = volumeSink({ ...defaultConfig, recordDir: dir }, { log: () => {} }, createMetrics());
    const recording = await sink.start({ session, user: "alice", target: "shop/web-0/app" }, { cols: 100, rows: 30 });
    const binary = Buffer.from([0x61, 0xff, 0xfe, 0x00, 0x62]);
    recording.output(Buffer.from("hello\r\n"));
    const [live] = await listRecordings(dir);
    expect(live).toMatchObject({ user: "alice", complete: false });
    recording.output(binary);
    recording.resize(120, 40);
    await recording.finish("exit");
    const [name] = readdirSync(dir);
    expect(name).toBe(`${recording.id}.cast`);
    const lines = readFileSync(join(dir, name!), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({
      version: 2,
      width: 100,
      height: 30,
      title: "shop/web-0/app",
      entryway: { session, user: "alice", target: "shop/web-0/app" },
    });
    expect(lines.slice(1).map((event) => event.slice(1))).toEqual([
      ["o", "hello\r\n"],
      ["o", "a\ufffd\ufffd\u0000b"],
      ["entryway.bytes", binary.toString("base64")],
      ["r", "120x40"],
      ["entryway.end", "exit"],
    ]);
    expect(Buffer.from(outputBytes(parseCast(readFileSync(join(dir, name!), "utf8")).events))).toEqual(
      Buffer.concat([Buffer.from("hello\r\n"), binary]),
    );
    const [summary] = await listRecordings(dir);
    expect(summary).toMatchObject({
      id: recording.id,
      user: "alice",
      target: "shop/web-0/app",
      size: readFileSync(join(dir, name!)).length,
      complete: true,
    });
    expect(summary!.duration).toBe(lines.at(-1)[0]);
  });

  it.each([
    "../etc/passwd",
    "2026-01-02T03-04-05-678Z-0b7d5a1e-2c3f-4d5e-8f90-123456789abc/../../x",
    "2026-01-02T03-04-05-678Z-0b7d5a1e-2c3f-4d5e-8f90-123456789abc.cast",
    "2026-01-02T03-04-05-678Z-../../../../etc/passwd",
    "..",
    "",
    "2026-13-45T03-04-05-678Z-0b7d5a1e-2c3f-4d5e-8f90-123456789abc",
    "2026-01-02T03-04-05-678Z-0B7D5A1E-2C3F-4D5E-8F90-123456789ABC",
    "%2e%2e%2fetc%2fpasswd",
  ])("refuses %j as a recording id", (id) => {
    expect(recordingFile("/recordings", id)).toBeNull();
  });

  it("accepts exactly the ids it writes", () => {
    const id = "2026-01-02T03-04-05-678Z-0b7d5a1e-2c3f-4d5e-8f90-123456789abc";
    expect(recordingFile("/recordings", id)).toBe(`/recordings/${id}.cast`);
  });

  it("prunes recordings last written before the retention, and nothing else", async () => {
    const dir = tempDir();
    const now = Date.now();
    const old = castFile(dir, new Date(now - 40 * DAY), "00000000-0000-4000-8000-000000000001", 31, now);
    const recent = castFile(dir, new Date(now - 40 * DAY), "00000000-0000-4000-8000-000000000002", 29, now);
    writeFileSync(join(dir, "notes.cast"), "not a recording");
    utimesSync(join(dir, "notes.cast"), new Date(now - 90 * DAY), new Date(now - 90 * DAY));
    expect(await pruneRecordings(dir, 30, now)).toBe(1);
    expect(readdirSync(dir).sort()).toEqual([`${recent}.cast`, "notes.cast"]);
    // A fake clock two days on: the other one is now past the retention too.
    expect(await pruneRecordings(dir, 30, now + 2 * DAY)).toBe(1);
    expect(readdirSync(dir)).toEqual(["notes.cast"]);
    expect(old).not.toBe(recent);
  });

  it("runs the cleanup on its timer", async () => {
    const dir = tempDir();
    const logs: unknown[] = [];
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const stop = startRecordingCleanup(dir, 7, { log: (...entry) => logs.push(entry) }, 1000);
    await vi.waitFor(() => expect(logs).toEqual([]));
    castFile(dir, new Date(Date.now() - 9 * DAY), "00000000-0000-4000-8000-000000000003", 8);
    vi.advanceTimersByTime(1000);
    await vi.waitFor(() => expect(readdirSync(dir)).toEqual([]), { interval: 20 });
    expect(logs).toEqual([["info", "old recordings removed", { removed: 1, retentionDays: 7 }]]);
    stop();
  });

  it("the gateway prunes at start when recordRetentionDays is set", async () => {
    const dir = tempDir();
    const old = castFile(dir, new Date(Date.now() - 3 * DAY), "00000000-0000-4000-8000-000000000004", 2);
    const kept = castFile(dir, new Date(), "00000000-0000-4000-8000-000000000005", 0);
    const gw = await startGateway(fakeBackend(), tokenAuthorizer(), { recordDir: dir, recordRetentionDays: 1 });
    try {
      await vi.waitFor(() => expect(readdirSync(dir)).toEqual([`${kept}.cast`]), { timeout: 5000, interval: 20 });
      expect(old).not.toBe(kept);
    } finally {
      await gw.stop();
    }
  });
});

/** A GET with the path sent exactly as given (fetch would resolve "../" before sending). */
function rawGet(
  base: string,
  path: string,
  token?: string,
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { hostname, port, path, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (c: Buffer) => chunks.push(c));
        response.on("end", () =>
          resolve({
            status: response.statusCode!,
            body: Buffer.concat(chunks).toString("utf8"),
            headers: response.headers,
          }),
        );
      },
    );
    request.on("error", reject);
    request.end();
  });
}

describe("GET /v1/recordings", () => {
  it("lists and serves recordings to reviewers only, audits each access, and never leaves the directory", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "notes.cast"), "not a recording");
    const gw = await startGateway(fakeBackend(), tokenAuthorizer(), {
      recordDir: join(dir, "casts"),
      reviewerGroups: ["auditors"],
    });
    try {
      const client = await EntryClient.connect(gw.url({ container: "web" }), { token: "user:alice:devs" });
      client.type("hello-recorded\n");
      await client.waitFor(/hello-recorded/);
      client.type("exit 0\n");
      await client.closed;
      await vi.waitFor(() => expect(gw.audit.at(-1)).toMatchObject({ event: "session.end" }));

      expect(await rawGet(gw.base, "/v1/recordings")).toMatchObject({
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="entryway"' },
      });
      expect((await rawGet(gw.base, "/v1/recordings", "user:alice:devs")).status).toBe(403);
      expect((await rawGet(gw.base, "/v1/recordings", "forged")).status).toBe(403);

      const listed = await rawGet(gw.base, "/v1/recordings", "user:rita:devs,auditors");
      expect(listed.status).toBe(200);
      const { recordings } = JSON.parse(listed.body) as {
        recordings: { id: string; user: string; target: string; start: string; duration: number; size: number }[];
      };
      expect(recordings).toHaveLength(1);
      const [recording] = recordings;
      expect(recording).toMatchObject({ user: "alice", target: "fake/web" });
      const onDisk = readFileSync(join(dir, "casts", `${recording!.id}.cast`), "utf8");
      expect(recording!.size).toBe(Buffer.byteLength(onDisk));
      expect(onDisk).toContain("hello-recorded");

      expect((await rawGet(gw.base, `/v1/recordings/${recording!.id}`, "user:alice:devs")).status).toBe(403);
      const served = await rawGet(gw.base, `/v1/recordings/${recording!.id}`, "user:rita:auditors");
      expect(served).toMatchObject({
        status: 200,
        body: onDisk,
        headers: { "content-type": "application/x-asciicast" },
      });

      for (const path of [
        "/v1/recordings/../notes",
        "/v1/recordings/..%2fnotes",
        "/v1/recordings/%2e%2e%2fnotes",
        "/v1/recordings/../../../../etc/passwd",
        `/v1/recordings/${recording!.id}/../../notes`,
        `/v1/recordings/${recording!.id}.cast`,
        "/v1/recordings/2026-01-02T03-04-05-678Z-00000000-0000-4000-8000-000000000009",
      ]) {
        const answer = await rawGet(gw.base, path, "user:rita:auditors");
        expect([path, answer.status]).toEqual([path, 404]);
        expect(answer.body).not.toContain("not a recording");
        expect(answer.body).not.toContain("root:");
      }

      expect(gw.access.map(({ event, status, user }) => [event, status, user])).toEqual([
        ["recordings.list", 401, undefined],
        ["recordings.list", 403, "alice"],
        ["recordings.list", 403, undefined],
        ["recordings.list", 200, "rita"],
        ["recordings.get", 403, "alice"],
        ["recordings.get", 200, "rita"],
        // The three paths with a literal "../" resolve outside /v1/recordings (the URL parser removes
        // dot segments) and get the server's plain 404 without reaching this route.
        ...Array.from({ length: 4 }, () => ["recordings.get", 404, "rita"]),
      ]);
      expect(gw.access[5]).toMatchObject({ recording: recording!.id, client: "127.0.0.1" });
    } finally {
      await gw.stop();
    }
  });

  it("knows no reviewers with an authorizer that names no groups", async () => {
    const dir = tempDir();
    const { authorize } = tokenAuthorizer();
    const gw = await startGateway(fakeBackend(), { authorize }, { recordDir: dir, reviewerGroups: ["auditors"] });
    try {
      const answer = await rawGet(gw.base, "/v1/recordings", "user:rita:auditors");
      expect(answer.status).toBe(403);
      expect(answer.body).toContain("names no groups");
    } finally {
      await gw.stop();
    }
  });
});
