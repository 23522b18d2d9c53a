// Docker backend against a real engine: podman's Docker-compatible API on a unix socket this test
// starts, and a container from an image built here from a busybox-static rootfs.
import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { dockerBackend } from "../src/backends/docker.js";
import { NotFoundError } from "../src/backends/backend.js";
import { EntryClient } from "./helpers/client.js";
import { execBackendCases } from "./helpers/exec-cases.js";
import { startGateway, tokenAuthorizer } from "./helpers/gateway.js";
import { podmanAvailable, startPodman, type Podman } from "./helpers/podman.js";

if (!podmanAvailable()) throw new Error("podman, runc and busybox-static are required (see .ci/apt-packages.txt)");

const CONTAINER = "entryway-exec-target";

execBackendCases("Docker (podman)", async () => {
  const podman = await startPodman();
  await podman.startContainer(CONTAINER);
  const backend = dockerBackend(`unix://${podman.socketPath}`);
  return {
    backend,
    target: { container: CONTAINER },
    execIds: async () => (JSON.parse(await podman.podman("inspect", CONTAINER)) as { ExecIDs?: string[] }[])[0]?.ExecIDs ?? [],
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
    const g = await startGateway(backend, { authorize: async ({ target }) => (target.kind === "docker" && target.container === prefix ? { allow: true, user: "alice" } : { allow: false, reason: `only ${prefix}` }) });
    try {
      const client = await EntryClient.connect(g.url({ container: prefix }), { token: "any" });
      expect(await client.closed).toMatchObject({ closeCode: "not-found", reason: `no container named ${prefix} (give a name, or an id in full)` });
    } finally {
      await g.stop();
    }
    await expect(backend.resolve({ kind: "docker", container: id.slice(0, 12) })).rejects.toThrow(NotFoundError); // the short id too
    expect(await backend.resolve({ kind: "docker", container: id })).toMatchObject({ container: id, label: "docker/web-1" });
    expect(await backend.resolve({ kind: "docker", container: "web-1" })).toMatchObject({ container: id, label: "docker/web-1" });
    // A container whose name is hex, and a prefix of web-1's id: the name wins (the engine looks names up before prefixes).
    const hexName = id.slice(0, 6);
    await podman.startContainer(hexName);
    const named = await backend.resolve({ kind: "docker", container: hexName });
    expect(named.label).toBe(`docker/${hexName}`);
    expect(named.container).not.toBe(id);
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
