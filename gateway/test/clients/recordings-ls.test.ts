// `entryway recordings ls` as a process: a reviewer sees the recorded session and can replay the id
// it lists; a user who may not replay recordings gets neither the list nor the recording (77).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntryClient } from "../../../testkit/gateway/client.js";
import { fakeBackend } from "../../../testkit/gateway/fake-backend.js";
import { startGateway, tokenAuthorizer, type TestGateway } from "../../../testkit/gateway/gateway.js";
import { cleanEnv, runCli } from "../../../testkit/gateway/cli-harness.js";

describe("entryway recordings ls", () => {
  let g: TestGateway;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "entryway-recordings-ls-"));
    g = await startGateway(fakeBackend(), tokenAuthorizer(), {
      recordDir: join(dir, "casts"),
      reviewerGroups: ["auditors"],
    });
    const client = await EntryClient.connect(g.url({ container: "web-1" }), { token: "user:alice" });
    client.type("echo recorded\nexit 0\n");
    expect(await client.closed).toMatchObject({ closeCode: "exit" });
  });
  afterAll(async () => {
    await g?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lists what a reviewer may replay, and the listed id replays; anyone else gets neither", async () => {
    const env = cleanEnv(dir, { ENTRYWAY_GATEWAY: g.base });
    const reviewer = { ...env, ENTRYWAY_TOKEN: "user:rita:auditors" };
    const listed = await runCli(["recordings", "ls"], { env: reviewer });
    expect(listed.code, listed.stderr).toBe(0);
    const [header, row, ...rest] = listed.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID\s+START\s+USER\s+TARGET\s+DURATION\s+SIZE$/);
    expect(rest).toEqual([]);
    const [id, , user, target] = row!.split(/\s+/);
    expect({ user, target }).toEqual({ user: "alice", target: "fake/web-1" }); // the backend's label
    const replayed = await runCli(["replay", "--bytes", id!], { env: reviewer });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout).toContain("recorded");

    const other = { ...env, ENTRYWAY_TOKEN: "user:alice" };
    for (const args of [
      ["recordings", "ls"],
      ["replay", "--bytes", id!],
    ]) {
      const refused = await runCli(args, { env: other });
      expect(refused.code).toBe(77);
      expect(refused.stderr).toMatch(
        /^entryway: permission denied: the gateway answered HTTP 403: .*not in a reviewer group/,
      );
      expect(refused.stdout).toBe("");
    }
    expect((await runCli(["recordings", "list"], { env: reviewer })).code).toBe(64);
  });
});
