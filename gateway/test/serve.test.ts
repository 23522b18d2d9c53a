// `entryway serve` as a process, configured only through ENTRYWAY_* variables, against the Kubernetes
// stand-in (API server + kubelet, testkit/gateway/kube-standin.ts): audit file, asciicast recording, JSON
// logs without secrets, and SIGTERM draining open sessions (told why, shells ended, exit 0).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntryClient } from "../../testkit/gateway/client.js";
import { startKubeStandin, type KubeStandin } from "../../testkit/gateway/kube-standin.js";
import { startServe, type ServeProcess } from "../../testkit/gateway/serve.js";

const TOKEN = "alice-secret-token-value";

describe("entryway serve", () => {
  let kube: KubeStandin;
  let dir: string;
  let serve: ServeProcess;

  beforeAll(async () => {
    kube = await startKubeStandin({
      protocol: "v5.channel.k8s.io",
      serviceAccountToken: "gateway-sa",
      pods: [{ namespace: "team-a", name: "web-0", containers: ["app"] }],
      users: { [TOKEN]: "alice" },
      execAllowed: { alice: ["team-a"] },
    });
    dir = mkdtempSync(join(tmpdir(), "entryway-serve-"));
    serve = await startServe({
      ENTRYWAY_BACKEND: "kubernetes",
      ENTRYWAY_KUBECONFIG: kube.kubeconfigPath,
      ENTRYWAY_AUTHORIZER: "kubernetes",
      ENTRYWAY_AUDIT_FILE: join(dir, "audit.jsonl"),
      ENTRYWAY_RECORD_DIR: join(dir, "casts"),
      ENTRYWAY_DRAIN_TIMEOUT_MS: "5000",
      ENTRYWAY_REAP_GRACE_SECONDS: "1",
    });
  });
  afterAll(async () => {
    await serve?.stop(true);
    await kube.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = () =>
    EntryClient.connect(`ws://127.0.0.1:${serve.port}/v1/enter?namespace=team-a&pod=web-0`, { token: TOKEN });

  it("records the session as asciicast v2 and audits it", async () => {
    const client = await open();
    client.winch(90, 20);
    client.type("echo 你好$((40+2))\n");
    await client.waitFor(/你好42/);
    client.type("exit 4\n");
    expect(await client.closed).toMatchObject({ exitCode: 4 });
    await expect.poll(() => readdirSync(join(dir, "casts")).length).toBe(1);
    const cast = readFileSync(join(dir, "casts", readdirSync(join(dir, "casts"))[0]!), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(cast[0]).toMatchObject({ version: 2, width: 90, height: 20, title: "team-a/web-0/app" });
    const events = cast.slice(1) as [number, string, string][];
    expect(events.every(([t], i) => i === 0 || t >= events[i - 1]![0])).toBe(true);
    expect(
      events
        .filter(([, type]) => type === "o")
        .map(([, , data]) => data)
        .join(""),
    ).toContain("你好42");
    const audit = readFileSync(join(dir, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(audit.map((e) => e.event)).toEqual(["session.start", "session.end"]);
    expect(audit[1]).toMatchObject({
      user: "alice",
      target: "team-a/web-0",
      container: "team-a/web-0/app",
      client: "127.0.0.1",
      exitCode: 4,
      closeCode: "exit",
    });
    expect(audit[1].bytesIn).toBeGreaterThan(0);
    expect(audit[1].bytesOut).toBeGreaterThan(0);
  });

  it("on SIGTERM tells open sessions why, ends their shells, and exits 0 within the drain time", async () => {
    const clients = [await open(), await open()];
    for (const c of clients) {
      c.type("echo up\n");
      await c.waitFor(/[\r\n]up\r\n/);
    }
    expect(kube.liveShells().length).toBeGreaterThanOrEqual(2);
    const exited = new Promise<number | null>((resolve) => serve.process.once("exit", (code) => resolve(code)));
    const started = Date.now();
    serve.process.kill("SIGTERM");
    for (const c of clients)
      expect(await c.closed).toMatchObject({ closeCode: "shutdown", reason: "the gateway is shutting down" });
    expect(await exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000 + 2000);
    expect(kube.liveShells()).toEqual([]);
    const logs = serve
      .stdout()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(logs.some((l) => l.msg === "draining" && l.sessions === 2)).toBe(true);
    expect(serve.stdout() + readFileSync(join(dir, "audit.jsonl"), "utf8")).not.toContain(TOKEN);
  });
});
