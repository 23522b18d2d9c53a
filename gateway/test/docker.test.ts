// Docker backend against a real engine: podman's Docker-compatible API on a unix socket this test
// starts, and a container from an image built here from a busybox-static rootfs.
import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { dockerBackend } from "../src/backends/docker.js";
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
