// Docker backend against a real engine: podman's Docker-compatible API on a unix socket this test
// starts, and a container from an image built here from a busybox-static rootfs.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { dockerBackend, ownContainerIds } from "../src/backends/docker.js";
import { NotFoundError } from "../src/backends/backend.js";
import { EntryClient } from "../../testkit/gateway/client.js";
import { startEngineProxy } from "../../testkit/gateway/engine-proxy.js";
import { execBackendCases, RAW_FIRST, rawModeKept, runRawFirst } from "../../testkit/gateway/exec-cases.js";
import { startGateway, tokenAuthorizer } from "../../testkit/gateway/gateway.js";
import { podmanAvailable, startPodman, type Podman } from "../../testkit/gateway/podman.js";

if (!podmanAvailable()) throw new Error("podman, runc and busybox-static are required (see .ci/apt-packages.txt)");

const CONTAINER = "entryway-exec-target";

execBackendCases("Docker (podman)", async () => {
  const podman = await startPodman();
  await podman.startContainer(CONTAINER);
  const backend = dockerBackend(`unix://${podman.socketPath}`);
  return {
    backend,
    target: { container: CONTAINER },
    execIds: async () =>
      (JSON.parse(await podman.podman("inspect", CONTAINER)) as { ExecIDs?: string[] }[])[0]?.ExecIDs ?? [],
    shells: async () => (await podman.shells(CONTAINER)).length,
    stop: () => podman.stop(),
  };
});

describe("Docker backend: targets", () => {
  let podman: Podman;
  beforeAll(async () => {
    podman = await startPodman();
    await podman.startContainer("stopped-one");
    await podman.podman("stop", "-t", "0", "stopped-one");
  });
  afterAll(() => podman?.stop());

  it("opens only the container named, or the one whose full id is given: never one an id prefix matches", async () => {
    await podman.startContainer("web-1");
    const id = (await podman.podman("inspect", "--format", "{{.Id}}", "web-1")).trim();
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const backend = dockerBackend(`unix://${podman.socketPath}`);
    // A user authorized only for a container named like the start of web-1's id: the engine alone opens web-1.
    const prefix = id.slice(0, 4);
    const g = await startGateway(backend, {
      authorize: async ({ target }) =>
        target.kind === "docker" && target.container === prefix
          ? { allow: true, user: "alice" }
          : { allow: false, reason: `only ${prefix}` },
    });
    try {
      const client = await EntryClient.connect(g.url({ container: prefix }), { token: "any" });
      expect(await client.closed).toMatchObject({
        closeCode: "not-found",
        reason: `no container named ${prefix} (give a name, or an id in full)`,
      });
    } finally {
      await g.stop();
    }
    await expect(backend.resolve({ kind: "docker", container: id.slice(0, 12) })).rejects.toThrow(NotFoundError); // the short id too
    expect(await backend.resolve({ kind: "docker", container: id })).toMatchObject({
      container: id,
      label: "docker/web-1",
    });
    expect(await backend.resolve({ kind: "docker", container: "web-1" })).toMatchObject({
      container: id,
      label: "docker/web-1",
    });
    // A container whose name is hex, and a prefix of web-1's id: the name wins (the engine looks names up before prefixes).
    const hexName = id.slice(0, 6);
    await podman.startContainer(hexName);
    const named = await backend.resolve({ kind: "docker", container: hexName });
    expect(named.label).toBe(`docker/${hexName}`);
    expect(named.container).not.toBe(id);
  });

  it("refuses the gateway's own container, known by what /proc/self says inside it, by name and by id", async () => {
    // The container the gateway would run in: one with a shell (busybox sh), which the shipped
    // image lacks. What its /proc/self says there is what ownContainerIds reads in the gateway's.
    await podman.startContainer("gateway-self");
    await podman.startContainer("web-2");
    const id = (await podman.podman("inspect", "--format", "{{.Id}}", "gateway-self")).trim();
    const procSelf = mkdtempSync(join(tmpdir(), "proc-self-"));
    try {
      for (const file of ["mountinfo", "cgroup"])
        writeFileSync(join(procSelf, file), await podman.podman("exec", "gateway-self", "cat", `/proc/self/${file}`));
      const own = ownContainerIds(procSelf);
      expect([...own]).toEqual([id]);
      const backend = dockerBackend(`unix://${podman.socketPath}`, { ownContainer: own });
      // Listed (entryway ls's candidates): the running containers by name, less the gateway's own.
      const names = async (listing: typeof backend) =>
        (await listing.list!({})).map(({ target }) => (target.kind === "docker" ? target.container : ""));
      expect(await names(backend)).toContain("web-2");
      expect(await names(backend)).not.toContain("gateway-self");
      expect(await names(backend)).not.toContain("stopped-one");
      expect(await names(dockerBackend(`unix://${podman.socketPath}`))).toContain("gateway-self");
      const g = await startGateway(backend, tokenAuthorizer());
      try {
        for (const container of ["gateway-self", id]) {
          const client = await EntryClient.connect(g.url({ container }), { token: "user:alice" });
          expect(await client.closed).toMatchObject({
            closeCode: "denied",
            reason: "permission denied: container gateway-self is the gateway's own",
          });
          expect(await podman.shells("gateway-self")).toHaveLength(0); // no exec was made
        }
        // Any other container opens, and the gateway's own opens to a gateway elsewhere.
        const client = await EntryClient.connect(g.url({ container: "web-2" }), { token: "user:alice" });
        client.type("echo in-web-2; exit 0\n");
        await client.waitFor(/in-web-2/);
        expect(await client.closed).toMatchObject({ closeCode: "exit" });
      } finally {
        await g.stop();
      }
      expect(ownContainerIds()).toEqual(new Set()); // this test runs on the host
      expect(
        await dockerBackend(`unix://${podman.socketPath}`).resolve({ kind: "docker", container: "gateway-self" }),
      ).toMatchObject({ container: id });
    } finally {
      rmSync(procSelf, { recursive: true, force: true });
    }
  });

  it("answers not-found for a missing or stopped container, and readiness follows the engine", async () => {
    const g = await startGateway(dockerBackend(`unix://${podman.socketPath}`), tokenAuthorizer());
    try {
      for (const container of ["no-such-container", "stopped-one"]) {
        const client = await EntryClient.connect(g.url({ container }), { token: "user:alice" });
        expect(await client.closed).toMatchObject({ closeCode: "not-found" });
      }
      expect((await fetch(`${g.monitoring}/readyz`)).status).toBe(200);
    } finally {
      await g.stop();
    }
    const unreachable = await startGateway(dockerBackend(`unix://${podman.dir}/nothing.sock`), tokenAuthorizer());
    try {
      expect((await fetch(`${unreachable.monitoring}/readyz`)).status).toBe(503);
    } finally {
      await unreachable.stop();
    }
  });
});

describe("Docker backend on podman: the terminal's modes and size", () => {
  const container = "entryway-tty-target";
  let podman: Podman;
  beforeAll(async () => {
    podman = await startPodman();
    await podman.startContainer(container);
  });
  afterAll(() => podman?.stop());

  it("raw mode set as the command's very first action survives, 200 sessions in a row", async () => {
    // conmon sets the new terminal's modes with a read-modify-write while the command may already
    // run (shell.ts): without the wrapper's start handshake, a `stty raw` that falls between its read
    // and its write is undone. Rare here (it takes conmon preempted between two system calls), so:
    // 200 of them, 10 at a time; kubernetes.test.ts has a runtime that does it every time.
    const g = await startGateway(dockerBackend(`unix://${podman.socketPath}`), tokenAuthorizer(), {
      maxSessionsPerUser: 20,
    });
    const undone: string[] = [];
    try {
      for (let batch = 0; batch < 20; batch++) {
        const outputs = await Promise.all(
          Array.from({ length: 10 }, () => runRawFirst(g.url({ container, command: RAW_FIRST }), "user:alice")),
        );
        undone.push(...outputs.filter((output) => !rawModeKept(output)));
      }
    } finally {
      await g.stop();
    }
    expect(undone).toEqual([]);
  });

  it("a storm of 10,000 resizes costs a few engine requests, and the last size wins", async () => {
    const proxy = await startEngineProxy(podman.socketPath, join(podman.dir, "counting.sock"));
    const g = await startGateway(dockerBackend(`unix://${proxy.path}`), tokenAuthorizer());
    try {
      const client = await EntryClient.connect(g.url({ container }), { token: "user:alice" });
      client.type("echo up\n");
      await client.waitFor(/\r\nup\r\n/);
      const resizes = /^POST \/v[\d.]+\/exec\/[^/]+\/resize\?/;
      const before = proxy.requests(resizes);
      for (let i = 0; i < 10_000; i++) client.winch(60 + (i % 97), 20 + (i % 31));
      client.winch(133, 41);
      // Each WINCH used to be its own request, each on its own connection while the others waited.
      await client.retypeUntil("stty size\n", /\r\n41 133\r\n/, 60_000);
      const sent = proxy.requests(resizes) - before;
      expect(sent).toBeGreaterThanOrEqual(1);
      expect(sent).toBeLessThanOrEqual(30);
      expect(proxy.maxOpen).toBeLessThanOrEqual(4); // the exec stream, a resize, and room for the odd inspect
      client.type("exit\n");
      await client.closed;
    } finally {
      await g.stop();
      await proxy.stop();
    }
  });
});
