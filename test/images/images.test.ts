/**
 * The two images users pull, built with podman from their Dockerfiles and run as a user runs them:
 * - gateway/Dockerfile: `entryway serve` as uid 1000 on a read-only root filesystem, with no
 *   capabilities, against podman's Docker API socket mounted in; a client speaking Entry's protocol
 *   gets a shell in a target container through it, authorized by a webhook on loopback.
 * - images/ssh-workspace/Dockerfile: its entrypoint starts sshd as the workspace user under the
 *   pod's restrictions (test/images/workspace.ts), and ssh runs a command in it, directly and through
 *   the Istio gateway model of the chart (test/ssh/istio-gateway-model.ts) with the repository's own
 *   script (scripts/e2e/ssh-through-gateway.sh: `entryway connect-proxy` as the ProxyCommand).
 * Bases are made here (testkit/harness/image-bases.ts): no registry is reachable. Build times and image sizes
 * are printed, not asserted.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntryClient } from "../../testkit/gateway/client";
import { podmanAvailable, startPodman, type Podman } from "../../testkit/gateway/podman";
import { helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { freePort, waitForPort } from "../../testkit/harness/net";
import { run } from "../../testkit/harness/process";
import { DEBIAN_BASE, makeBases, NODE_BASE, NPM_CACHE_DIR } from "../../testkit/harness/image-bases";
import { buildGatewayEnvoy, startGatewayModel } from "../ssh/istio-gateway-model";
import { startWorkspaceContainer, type WorkspaceContainer } from "./workspace";

const runFile = promisify(execFile);
const toolsPresent = podmanAvailable() && existsSync("/usr/sbin/debootstrap") && existsSync("/usr/bin/ssh");
if (!toolsPresent && process.env.CI)
  throw new Error(
    "podman, runc, busybox-static, debootstrap and openssh-client are required (see .ci/apt-packages.txt)",
  );

const VERSION = "0.0.0-images-test";
const GATEWAY_IMAGE = `localhost/entryway/exec-gateway:${VERSION}`;
const WORKSPACE_IMAGE = `localhost/entryway/ssh-workspace:${VERSION}`;
const EXPECTED_LABELS = {
  "org.opencontainers.image.source": "https://github.com/entryway/entryway",
  "org.opencontainers.image.licenses": "Apache-2.0",
  "org.opencontainers.image.version": VERSION,
};

let podman: Podman;

async function timed(label: string, step: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  await step();
  console.log(`images: ${label}: ${((performance.now() - start) / 1000).toFixed(1)} s`);
}

async function imageSize(image: string): Promise<string> {
  const bytes = Number((await podman.podman("image", "inspect", "--format", "{{.Size}}", image)).trim());
  return `${(bytes / 1e6).toFixed(0)} MB`;
}

/** Every path in the image's filesystem, from an export of a container that never starts. */
async function imageFiles(image: string): Promise<string[]> {
  const container = (await podman.podman("create", image)).trim();
  try {
    const tar = join(podman.dir, `${container}.tar`);
    await podman.podman("export", "-o", tar, container);
    const { stdout } = await runFile("tar", ["-tf", tar], { maxBuffer: 256 * 1024 * 1024 });
    return stdout
      .split("\n")
      .filter(Boolean)
      .map((path) => `/${path.replace(/^\.?\//, "")}`);
  } finally {
    await podman.podman("rm", container);
  }
}

describe.skipIf(!toolsPresent)("images built with podman and run as users run them", () => {
  beforeAll(async () => {
    podman = await startPodman({ storageDriver: "overlay" });
    const times = await makeBases(podman);
    for (const [step, ms] of Object.entries(times)) console.log(`images: ${step}: ${(ms / 1000).toFixed(1)} s`);
    const build = (...args: string[]) =>
      podman.podman("build", "--network", "host", "--build-arg", `VERSION=${VERSION}`, ...args);
    mkdirSync(NPM_CACHE_DIR, { recursive: true });
    await timed("build gateway/Dockerfile", () =>
      build(
        "--build-arg",
        `BASE=${NODE_BASE}`,
        "-v",
        `${NPM_CACHE_DIR}:/root/.npm`,
        "-f",
        join(repoRoot, "gateway/Dockerfile"),
        "-t",
        GATEWAY_IMAGE,
        repoRoot,
      ),
    );
    await timed("build images/ssh-workspace/Dockerfile", () =>
      build("--build-arg", `BASE=${DEBIAN_BASE}`, "-t", WORKSPACE_IMAGE, join(repoRoot, "images/ssh-workspace")),
    );
    console.log(
      `images: sizes: exec-gateway ${await imageSize(GATEWAY_IMAGE)}, ssh-workspace ${await imageSize(WORKSPACE_IMAGE)}, node base ${await imageSize(NODE_BASE)}`,
    );
  }, 1_800_000);

  afterAll(async () => {
    await podman?.podman("rm", "-af", "-t", "0").catch(() => {});
    await podman?.stop();
  }, 600_000); // the store holds the built images: removing it takes minutes on a loaded machine

  it.each([
    [GATEWAY_IMAGE, "Entryway exec gateway"],
    [WORKSPACE_IMAGE, "Entryway SSH workspace"],
  ])("%s carries the OCI labels", async (image, title) => {
    const labels = JSON.parse(await podman.podman("image", "inspect", "--format", "{{json .Labels}}", image)) as Record<
      string,
      string
    >;
    expect(labels).toMatchObject({ ...EXPECTED_LABELS, "org.opencontainers.image.title": title });
    expect(labels["org.opencontainers.image.description"]).toMatch(/\S/);
  });

  it("the gateway image holds Node and the gateway, and no shell, package manager or npm", async () => {
    const files = await imageFiles(GATEWAY_IMAGE);
    expect(files).toContain("/usr/local/bin/node");
    expect(files).toContain("/app/gateway/dist/cli/main.js");
    const names = new Set(files.map((path) => path.replace(/\/$/, "").split("/").pop()));
    for (const tool of ["sh", "bash", "dash", "busybox", "apt", "apt-get", "dpkg", "npm", "npx", "ldd", "ls", "cat"])
      expect(names, tool).not.toContain(tool);
    const config = JSON.parse(
      await podman.podman("image", "inspect", "--format", "{{json .Config}}", GATEWAY_IMAGE),
    ) as { User: string };
    expect(config.User).toBe("1000:1000");
  });

  it("the gateway image resolves its user and host names without NSS modules (glibc's own files and dns)", async () => {
    const script =
      'const os = require("node:os"); require("node:dns").lookup("localhost", { family: 4 }, (e, a) => console.log(os.userInfo().username, e ? e.code : a))';
    const out = await podman.podman(
      "run",
      "--rm",
      "--network",
      "none",
      "--read-only",
      "--entrypoint",
      "/usr/local/bin/node",
      GATEWAY_IMAGE,
      "-e",
      script,
    );
    expect(out).toBe("node 127.0.0.1\n");
  });

  describe("the gateway image serving a shell through podman's Docker API", () => {
    let webhook: Server;
    const webhookCalls: { token: string; target: Record<string, unknown> }[] = [];
    let gatewayPort = 0;
    let metricsPort = 0;

    beforeAll(async () => {
      // The webhook authorizer's peer: allows one token, as user alice.
      webhook = createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString()));
        request.on("end", () => {
          const call = JSON.parse(body) as { token: string; target: Record<string, unknown> };
          webhookCalls.push(call);
          response.setHeader("content-type", "application/json");
          response.end(
            JSON.stringify(
              call.token === "let-me-in"
                ? { allowed: true, user: "alice" }
                : { allowed: false, reason: "unknown token" },
            ),
          );
        });
      });
      await new Promise<void>((resolve) => webhook.listen(0, "127.0.0.1", resolve));

      await podman.startContainer("exec-target");
      // The Docker socket as a host gives it: a group the gateway's user is added to, not world-writable.
      const socketGroup = 2375;
      await runFile("chgrp", [String(socketGroup), podman.socketPath]);
      await runFile("chmod", ["0660", podman.socketPath]);

      gatewayPort = await freePort();
      metricsPort = await freePort();
      await podman.podman(
        "run",
        "-d",
        "--name",
        "exec-gateway",
        "--network",
        "host",
        "--read-only",
        "--read-only-tmpfs=false",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--group-add",
        String(socketGroup),
        "-v",
        `${podman.socketPath}:/var/run/docker.sock`,
        "-e",
        "ENTRYWAY_HOST=127.0.0.1",
        "-e",
        `ENTRYWAY_PORT=${gatewayPort}`,
        "-e",
        "ENTRYWAY_METRICS_HOST=127.0.0.1",
        "-e",
        `ENTRYWAY_METRICS_PORT=${metricsPort}`,
        "-e",
        "ENTRYWAY_BACKEND=docker",
        "-e",
        "ENTRYWAY_AUTHORIZER=webhook",
        "-e",
        `ENTRYWAY_WEBHOOK_URL=http://127.0.0.1:${(webhook.address() as AddressInfo).port}/entry-auth`,
        GATEWAY_IMAGE,
      );
      const running = async () =>
        (await podman.podman("inspect", "--format", "{{.State.Running}}", "exec-gateway")).trim() === "true";
      try {
        await waitForPort(gatewayPort, "the gateway container", running);
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${await podman.podman("logs", "exec-gateway").catch(() => "")}`, {
          cause: error,
        });
      }
    }, 120_000);

    afterAll(() => new Promise<void>((resolve) => (webhook ? webhook.close(() => resolve()) : resolve())));

    it("runs as uid 1000 and answers readiness once the Docker API answers", async () => {
      // podman top reads /proc from the host (psgo): the image has no ps to run. `node` is uid 1000 in the image's /etc/passwd.
      const top = await podman.podman("top", "exec-gateway", "user", "args");
      expect(top.trim().split("\n").slice(1)).toEqual([
        expect.stringMatching(/^node\s+\/usr\/local\/bin\/node \/app\/gateway\/dist\/cli\/main\.js serve\s*$/),
      ]);
      const pid = (await podman.podman("inspect", "--format", "{{.State.Pid}}", "exec-gateway")).trim();
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      expect(status).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
      expect(status).toMatch(/^CapEff:\s+0+$/m);
      // Readiness is served on the monitoring port only, never on the public one.
      expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${gatewayPort}/readyz`)).status).toBe(404);
    });

    it("gives an allowed client a shell in the target container, with its output and exit code", async () => {
      const client = await EntryClient.connect(`ws://127.0.0.1:${gatewayPort}/v1/enter?container=exec-target`, {
        token: "let-me-in",
      });
      client.winch(80, 24);
      client.type("echo from-the-image-$((6 * 7)); exit 7\n");
      await client.waitFor(/from-the-image-42/);
      expect(await client.closed).toMatchObject({ closeCode: "exit", exitCode: 7 });
      expect(webhookCalls.at(-1)).toMatchObject({ token: "let-me-in", target: { container: "exec-target" } });
    });

    it("refuses a token the webhook does not allow", async () => {
      const client = await EntryClient.connect(`ws://127.0.0.1:${gatewayPort}/v1/enter?container=exec-target`, {
        token: "guess",
      });
      expect(await client.closed).toMatchObject({ closeCode: "denied" });
      expect(await podman.shells("exec-target")).toEqual([]);
    });
  });

  describe("the workspace image reached with ssh", () => {
    let workspace: WorkspaceContainer;
    beforeAll(async () => {
      workspace = await startWorkspaceContainer(podman, WORKSPACE_IMAGE, "ssh-workspace");
    }, 120_000);

    const ssh = (command: string) => {
      const result = spawnSync("ssh", workspace.sshArgs(command), { encoding: "utf8", timeout: 60_000 });
      return { status: result.status, stdout: result.stdout, stderr: result.stderr };
    };

    it("runs a command as the workspace user, with no capabilities and no privilege escalation", () => {
      const result = ssh("id -u; id -un; grep -E '^(CapPrm|CapEff|CapBnd|NoNewPrivs)' /proc/self/status");
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      const [uid, name, ...status] = result.stdout.trim().split("\n");
      expect([uid, name]).toEqual(["1000", "dev"]);
      expect(Object.fromEntries(status.map((line) => line.split(/:\s+/)))).toEqual({
        CapPrm: "0000000000000000",
        CapEff: "0000000000000000",
        CapBnd: "0000000000000000",
        NoNewPrivs: "1",
      });
    });

    it("has no root process: sshd and the session run as uid 1000", () => {
      const result = ssh("ps -e -o uid=,comm=");
      expect(result.status).toBe(0);
      const processes = result.stdout
        .trim()
        .split("\n")
        .map((line) => line.trim().split(/\s+/));
      expect(processes.map(([, command]) => command)).toContain("sshd");
      expect(processes.filter(([uid]) => uid !== "1000")).toEqual([]);
    });

    it("writes only to the home volume and the emptyDirs: the root filesystem is read-only", () => {
      const result = ssh(
        'for f in ~/kept /tmp/scratch /run/entryway/scratch /etc/x /usr/local/x; do touch $f 2>/dev/null && echo "$f yes" || echo "$f no"; done',
      );
      expect(result.stdout).toBe(
        [
          "/home/dev/kept yes",
          "/tmp/scratch yes",
          "/run/entryway/scratch yes",
          "/etc/x no",
          "/usr/local/x no",
          "",
        ].join("\n"),
      );
    });

    it("is reached through the CONNECT gateway of the chart (the Istio model) with entryway connect-proxy, and an undeclared workspace is refused", async () => {
      const objects = helmTemplate(helmBinaries()[0], join(repoRoot, "charts/entryway"), {
        valuesFiles: [join(repoRoot, "charts/entryway/ci/ssh-one-workspace.yaml")],
      });
      const envoy = buildGatewayEnvoy({ objects, gatewayName: "entryway-connect-gateway" });
      expect(envoy.rejected).toBeUndefined();
      const clusters = [...envoy.clusters].filter((c) => c.startsWith("outbound|22||"));
      expect(clusters).toHaveLength(1);
      const fqdn = clusters[0]!.split("||")[1]!;
      const model = await startGatewayModel(envoy, { [clusters[0]!]: workspace.port });
      try {
        // The container's host key, known by the workspace's cluster name (port 22, as users reach it).
        const knownHosts = join(podman.dir, "known_hosts.gateway");
        writeFileSync(knownHosts, readFileSync(workspace.knownHostsFile, "utf8").replace(/^\S+/, fqdn));
        const script = (target: string) =>
          run("bash", [join(repoRoot, "scripts/e2e/ssh-through-gateway.sh")], {
            env: {
              ...process.env,
              E2E_DIR: join(podman.dir, "e2e"),
              GATEWAY: `127.0.0.1:${model.port}`,
              WORKSPACE: target,
              SSH_USER: workspace.user,
              IDENTITY_FILE: workspace.identityFile,
              KNOWN_HOSTS: knownHosts,
            },
          });
        expect(await script(fqdn)).toEqual({
          status: 0,
          stdout: `ssh through 127.0.0.1:${model.port} to ${workspace.user}@${fqdn}: ok\n`,
          stderr: "",
        });
        const undeclared = fqdn.replace(/^[^.]+/, "nosuch");
        const refused = await script(undeclared);
        expect(refused.status).not.toBe(0);
        expect(refused.stderr).toContain(
          `entryway connect-proxy: the gateway 127.0.0.1:${model.port} refused ${undeclared}:22: 404 Not Found`,
        );
      } finally {
        await model.close();
      }
    });

    it("refuses a key that is not in the mounted authorized_keys", async () => {
      const stranger = join(podman.dir, "stranger");
      await runFile("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", stranger]);
      const args = workspace.sshArgs("true").map((arg) => (arg === workspace.identityFile ? stranger : arg));
      const result = spawnSync("ssh", args, { encoding: "utf8", timeout: 60_000 });
      expect(result.status).toBe(255);
      expect(result.stderr).toMatch(/Permission denied \(publickey\)/);
    });
  });
});
