/**
 * SSH through the CONNECT gateway, end to end on loopback with real parts and a model of Envoy:
 * Debian's sshd (started by the image's own entrypoint and sshd_config); the listener, route
 * configuration and clusters REAL istiod code generates for the gateway from the RENDERED manifests
 * (istiod.ts, scripts/realcp/istio), served by the Envoy half of istio-gateway-model.ts (Envoy's
 * matching) tunnelling to that sshd; the ssh config the stack outputs (gateway pointed at
 * loopback); and both ProxyCommands: the built-in `entryway connect-proxy` (the default) and
 * Debian's proxytunnel.
 *
 * Front ends: the dev stack (Pulumi.dev.yaml through the Stack under the offline runtime) and every
 * `ssh-*` chart scenario (helm template; its ssh config from the parity stack file, which the
 * parity test keeps equal to the chart). Each one's every workspace runs a command through both
 * clients; 20 MB each way is copied once per client for the Pulumi dev stack and the chart's TLS
 * scenario; an undeclared host and the declared host on port 2222 get 404, with one line naming
 * status and target in ssh's stderr.
 *
 * As root, the sshd also runs as an unprivileged workspace user without capabilities, as in the pod.
 * The image's sshd settings themselves are checked in workspace-sshd.test.ts.
 *
 * Needs ssh, sshd, ssh-keygen, ssh-agent, openssl, proxytunnel and nss_wrapper (its hosts file gives
 * the clients the gateway's name; as root it also gives the unprivileged sshd its user, with
 * setpriv). Under CI=true a missing tool fails the suite; elsewhere the parts that need it are
 * skipped and the missing tools are named. The istio tool is built on first use
 * (scripts/realcp/build.sh); a build that fails fails the suite, never skips it.
 *
 * Everything listens on 127.0.0.1 only and is stopped by PID afterwards.
 */
import { spawnSync, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseHostPort, sshConfigBlock, type SshConfigEntry } from "@entryway/ssh-config";
import { privateCaCertificate, type ServerCertificate } from "../../testkit/harness/certificates";
import { helmBinaries, repoRoot } from "../../testkit/harness/helm";
import { freePort, waitForPort } from "../../testkit/harness/net";
import { runBytes } from "../../testkit/harness/process";
import { ExitCode } from "../../gateway/src/cli/exit-codes";
import { realTool } from "../../testkit/harness/realcp";
import type { ObjectLike } from "../../testkit/harness/validate";
import { devStackConfig, renderScenario, renderStack, sshScenarios } from "./front-ends";
import { startGatewayModel, type GatewayEnvoy, type RunningGatewayModel } from "./istio-gateway-model";
import { gatewayEnvoyFromIstiod, istiodGatewayConfig } from "./istiod";
import {
  Children,
  entrypointSshd,
  imageEntrypoint,
  isRoot,
  loopbackSshdConfig,
  missingTools,
  NSS_WRAPPER,
  userKey,
} from "./workspace-sshd";

const user = os.userInfo().username;
const missing = missingTools("test/ssh/e2e.test.ts", [
  "ssh",
  "ssh-keygen",
  "openssl",
  "proxytunnel",
  "/usr/sbin/sshd",
  NSS_WRAPPER,
  // As root, a second sshd runs as an unprivileged user, as in the pod.
  ...(isRoot ? ["setpriv"] : []),
]);
const canRun = missing.length === 0;
const canRunAsOtherUser = isRoot && canRun;

// 0755: the unprivileged sshd must reach its own folder inside it.
const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-ssh-e2e-"));
chmodSync(dir, 0o755);
const children = new Children();
const models: RunningGatewayModel[] = [];

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

let sshPort = 0;
let key = "";
const knownHosts = path.join(dir, "known_hosts");
/** The gateway's certificate (TLS scenarios), from a test CA, for the name users reach it by. */
let gatewayCertificate: ServerCertificate | undefined;
const binDir = path.join(dir, "bin");
const tlsMaterial = () => ({
  cert: readFileSync(gatewayCertificate!.certFile),
  key: readFileSync(gatewayCertificate!.keyFile),
});
/**
 * The gateway as the test's clients reach it: its hostname is set to this, and the port is the
 * model's. A name with a dot: Istio refuses a TLS Gateway host without one (istiod.test.ts). The
 * clients resolve it to 127.0.0.1 through nss_wrapper's hosts file (RFC 2606 keeps `.test` free).
 */
const GATEWAY_HOST = "ssh-gateway.test";
const hostsFile = path.join(dir, "hosts");
const env = () => ({
  ...process.env,
  PATH: `${binDir}:${process.env.PATH}`,
  LD_PRELOAD: NSS_WRAPPER,
  NSS_WRAPPER_HOSTS: hostsFile,
});

/** One front end's rendering: its objects, and the ssh config its stack outputs. */
interface FrontEnd {
  readonly name: string;
  readonly objects: ObjectLike[];
  readonly sshConfig: string;
  /** The 20 MB copy runs here (once per client per front end). */
  readonly bulk: boolean;
}

const stackOutputs = (config: Record<string, unknown>, where: string) =>
  renderStack({ ...config, connectGateway: { ...(config.connectGateway as object), hostname: GATEWAY_HOST } }, where);

async function frontEnds(): Promise<FrontEnd[]> {
  const pulumiDev = await stackOutputs(devStackConfig(), "Pulumi.dev.yaml");
  const scenarios = sshScenarios();
  expect(scenarios.length).toBeGreaterThanOrEqual(3);
  // One program at a time: the offline runtime records one.
  const fromChart: FrontEnd[] = [];
  for (const scenario of scenarios) {
    const objects = renderScenario(helmBinaries()[0], scenario, [`connectGateway.hostname=${GATEWAY_HOST}`]);
    // The chart has no ssh config output: its parity stack file (equal objects, test/parity) has.
    const stackFile = path.join(repoRoot, "test/parity", `${path.basename(scenario, ".yaml")}.stack.yaml`);
    const { sshConfig } = await stackOutputs(
      parse(readFileSync(stackFile, "utf8")) as Record<string, unknown>,
      stackFile,
    );
    fromChart.push({
      name: `chart ${path.basename(scenario)}`,
      objects,
      sshConfig,
      bulk: path.basename(scenario) === "ssh-tls.yaml",
    });
  }
  return [
    { name: "Pulumi.dev.yaml", objects: pulumiDev.manifests, sshConfig: pulumiDev.sshConfig, bulk: true },
    ...fromChart,
  ];
}

/** The Host blocks of an ssh config, field by field. */
function hostBlocks(config: string): { alias: string; fields: Record<string, string> }[] {
  return config
    .split(/^(?=Host )/m)
    .filter((b) => b.trim())
    .map((block) => {
      const [first, ...rest] = block.trim().split("\n");
      const fields = Object.fromEntries(
        rest.map((line) => line.trim().split(/ (.*)/s).slice(0, 2) as [string, string]),
      );
      return { alias: first.replace(/^Host /, ""), fields };
    });
}

/**
 * The stack's block for one client, as a user on this machine would have it: the gateway's port
 * is the model's, the user is this test's (sshd logs in only the user it runs as), the key is the
 * test's, and a TLS gateway's CA is the test CA.
 */
function clientBlock(
  block: { alias: string; fields: Record<string, string> },
  gatewayPort: number,
  proxy: "entryway" | "proxytunnel",
  hostName = block.fields.HostName,
): string {
  const command = block.fields.ProxyCommand;
  const tls = / (-E|--tls) /.test(command);
  const gateway = /(?:-p |connect-proxy (?:--tls )?)(\S+)/.exec(command)![1];
  expect(parseHostPort(gateway).host).toBe(GATEWAY_HOST);
  const entry: SshConfigEntry = {
    alias: block.alias,
    hostName,
    port: Number(block.fields.Port),
    user,
    gateway: `${GATEWAY_HOST}:${gatewayPort}`,
    tls,
    ...(tls ? { caFile: gatewayCertificate!.caFile } : {}),
    proxy,
    identityFile: key,
  };
  return sshConfigBlock(entry);
}

function sshConfigFile(name: string, blocks: string[]): string {
  const file = path.join(dir, `${name.replace(/\W+/g, "-")}.config`);
  writeFileSync(
    file,
    `${blocks.join("\n")}\nHost *\n  UserKnownHostsFile ${knownHosts}\n  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 20\n`,
  );
  return file;
}

let fronts: FrontEnd[] = [];

beforeAll(async () => {
  if (!canRun) return;
  sshPort = await freePort();
  writeFileSync(hostsFile, `127.0.0.1 ${GATEWAY_HOST}\n`);

  // Keys made for this test: the workspace's host key (by its entrypoint) and the user's key.
  key = userKey(dir);

  // sshd from the image's entrypoint and sshd_config, on loopback only.
  const hostKeyDir = path.join(dir, "hostkey");
  const sshd = entrypointSshd({
    port: sshPort,
    dir,
    config: loopbackSshdConfig(path.join(dir, "sshd_config")),
    hostKeyDir,
    pidFile: path.join(dir, "sshd.pid"),
  });
  const child = children.start("sshd", sshd.command, sshd.args, sshd.env);
  await waitForPort(sshPort, "sshd", () => child.exitCode === null);

  // The gateway's certificate (TLS scenarios), from a test CA, for the name users reach it by.
  gatewayCertificate = privateCaCertificate(dir, [GATEWAY_HOST, "127.0.0.1"], "entryway test CA");

  // `entryway` on PATH, as an installed CLI would be.
  mkdirSync(binDir);
  const tsx = path.join(repoRoot, "node_modules/tsx/dist/cli.mjs");
  writeFileSync(
    path.join(binDir, "entryway"),
    `#!/bin/sh\nexec "${process.execPath}" "${tsx}" "${path.join(repoRoot, "gateway/src/cli/main.ts")}" "$@"\n`,
    { mode: 0o755 },
  );

  // The istio tool (istiod's config generation) is built on first use: about 35 minutes cold.
  realTool("istio");
  fronts = await frontEnds();
  // Every workspace's host key is the one sshd (ssh looks HostName up; port 22 is written bare).
  const hostKey = readFileSync(path.join(hostKeyDir, "ssh_host_ed25519_key.pub"), "utf8");
  const hostNames = new Set(fronts.flatMap((f) => hostBlocks(f.sshConfig).map((b) => b.fields.HostName)));
  writeFileSync(knownHosts, [...hostNames].map((h) => `${h} ${hostKey}`).join(""));
}, 60 * 60_000);

afterAll(async () => {
  await Promise.all(models.map((m) => m.close()));
  children.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What real istiod sends the front end's gateway (generated once per front end). */
const istiodOutputs = new WeakMap<FrontEnd, Promise<GatewayEnvoy>>();
function istiodEnvoyFor(front: FrontEnd): Promise<GatewayEnvoy> {
  let envoy = istiodOutputs.get(front);
  if (!envoy) {
    const gatewayName = "entryway-connect-gateway";
    envoy = istiodGatewayConfig(front.objects, { gatewayName }).then((config) =>
      gatewayEnvoyFromIstiod(config, front.objects, gatewayName),
    );
    istiodOutputs.set(front, envoy);
  }
  return envoy;
}

/**
 * The front end's gateway: istiod's real output for it served by the Envoy model, every
 * workspace cluster tunnelling to the test's sshd.
 */
async function gatewayFor(front: FrontEnd, endpointPort = sshPort): Promise<RunningGatewayModel> {
  const envoy = await istiodEnvoyFor(front);
  expect(envoy.rejected).toBeUndefined();
  const endpoints = Object.fromEntries(
    [...envoy.clusters].filter((c) => c.startsWith("outbound|22||")).map((c) => [c, endpointPort]),
  );
  const model = await startGatewayModel(envoy, endpoints, envoy.sniHosts ? tlsMaterial() : undefined);
  models.push(model);
  return model;
}

/**
 * `entryway connect-proxy --tls` to alice's workspace through the gateway of the chart's TLS
 * scenario, reached at `gateway(its port)`, nothing on stdin: its one line of stderr, and the model.
 */
async function tlsConnectProxy(gateway: (port: number) => string, options: string[] = []) {
  const model = await gatewayFor(fronts.find((f) => f.name === "chart ssh-tls.yaml")!);
  const result = await runBytes(
    "entryway",
    ["connect-proxy", "--tls", ...options, gateway(model.port), "entryway-ws-alice.entryway.svc.cluster.local", "22"],
    { input: "", env: env() },
  );
  expect(result.stderr.trim().split("\n")).toHaveLength(1);
  return { model, result };
}

const CLIENTS = [
  { proxy: "entryway" as const, name: "entryway connect-proxy (the default)" },
  { proxy: "proxytunnel" as const, name: "proxytunnel" },
];

describe.runIf(canRun)(
  "ssh through the gateway (istiod's real config, Envoy modelled), with the ssh config the stack outputs",
  () => {
    it("covers the dev stack and every ssh-* chart scenario", () => {
      expect(fronts.map((f) => f.name)).toEqual([
        "Pulumi.dev.yaml",
        "chart ssh-one-workspace.yaml",
        "chart ssh-several-workspaces.yaml",
        "chart ssh-tls.yaml",
      ]);
      // The stack's blocks use the default client.
      for (const front of fronts)
        for (const block of hostBlocks(front.sshConfig))
          expect(block.fields.ProxyCommand).toMatch(/^entryway connect-proxy /);
    });

    it("every workspace of every front end runs a command through both clients", async () => {
      for (const front of fronts) {
        const model = await gatewayFor(front);
        for (const client of CLIENTS) {
          const blocks = hostBlocks(front.sshConfig);
          const config = sshConfigFile(
            `${front.name}-${client.proxy}`,
            blocks.map((b) => clientBlock(b, model.port, client.proxy)),
          );
          for (const block of blocks) {
            const result = await runBytes("ssh", ["-F", config, block.alias, "echo through-the-gateway; id -un"], {
              env: env(),
            });
            expect({
              front: front.name,
              client: client.proxy,
              alias: block.alias,
              stderr: result.stderr,
              status: result.status,
            }).toEqual({ front: front.name, client: client.proxy, alias: block.alias, stderr: "", status: 0 });
            expect(result.stdout.toString()).toBe(`through-the-gateway\n${user}\n`);
          }
        }
        // Each CONNECT the model saw was for a declared workspace on port 22, and was tunnelled.
        expect(model.log.length).toBe(hostBlocks(front.sshConfig).length * CLIENTS.length);
        expect(
          model.log.every(
            (d) => d.status === 200 && d.method === "CONNECT" && d.authority.endsWith(".svc.cluster.local:22"),
          ),
        ).toBe(true);
      }
    }, 300_000);

    it("copies 20 MB each way byte-identical, once per client, through the Pulumi dev stack and the chart's TLS scenario", async () => {
      const data = randomBytes(20 * 1024 * 1024);
      for (const front of fronts.filter((f) => f.bulk)) {
        const model = await gatewayFor(front);
        const [block] = hostBlocks(front.sshConfig);
        for (const client of CLIENTS) {
          const config = sshConfigFile(`bulk-${front.name}-${client.proxy}`, [
            clientBlock(block, model.port, client.proxy),
          ]);
          const target = path.join(dir, `upload-${client.proxy}`);
          const up = await runBytes("ssh", ["-F", config, block.alias, `cat > ${target}`], { input: data, env: env() });
          expect(up.status, up.stderr).toBe(0);
          expect(sha256(readFileSync(target))).toBe(sha256(data));
          const down = await runBytes("ssh", ["-F", config, block.alias, `cat ${target}`], { env: env() });
          expect(down.status, down.stderr).toBe(0);
          expect(down.stdout.length).toBe(data.length);
          expect(sha256(down.stdout)).toBe(sha256(data));
          rmSync(target);
        }
      }
    }, 300_000);

    it("an undeclared host and the declared host on port 2222 get 404, and ssh shows one line naming status and target", async () => {
      for (const front of fronts) {
        const model = await gatewayFor(front);
        const [block] = hostBlocks(front.sshConfig);
        const declared = block.fields.HostName;
        const undeclared = declared.replace(/^[^.]+/, "entryway-ws-nobody");
        for (const [hostName, port] of [
          [undeclared, 22],
          [declared, 2222],
        ] as const) {
          const entry = clientBlock(block, model.port, "entryway", hostName).replace(
            /^ {2}Port 22$/m,
            `  Port ${port}`,
          );
          const config = sshConfigFile(`refused-${front.name}`, [entry]);
          const result = await runBytes("ssh", ["-F", config, block.alias, "true"], { env: env() });
          expect(result.status).toBe(255);
          const lines = result.stderr.split("\n").filter((l) => l.startsWith("entryway connect-proxy:"));
          expect(lines).toEqual([
            `entryway connect-proxy: the gateway ${GATEWAY_HOST}:${model.port} refused ${hostName}:${port}: 404 Not Found (no workspace is declared at that address on this gateway)`,
          ]);
          // proxytunnel is refused the same way (ssh fails, nothing reaches sshd).
          const viaProxytunnel = await runBytes(
            "ssh",
            [
              "-F",
              sshConfigFile(`refused-pt-${front.name}`, [
                clientBlock(block, model.port, "proxytunnel", hostName).replace(/^ {2}Port 22$/m, `  Port ${port}`),
              ]),
              block.alias,
              "true",
            ],
            { env: env() },
          );
          expect(viaProxytunnel.status).toBe(255);
          expect(viaProxytunnel.stdout.toString()).toBe("");
        }
        expect(model.log.map((d) => d.status)).toEqual([404, 404, 404, 404]);
      }
    }, 300_000);

    it("the previous route form (domain <fqdn>:22), through istiod and the modelled Envoy, fails: 404, named in one line", async () => {
      const front = fronts[0];
      const objects = structuredClone(front.objects) as (ObjectLike & {
        spec?: {
          configPatches?: { applyTo: string; patch: { value: { domains: string[]; routes: { match: unknown }[] } } }[];
        };
      })[];
      for (const filter of objects.filter((o) => o.kind === "EnvoyFilter")) {
        for (const patch of filter.spec!.configPatches!.filter((p) => p.applyTo === "VIRTUAL_HOST")) {
          patch.patch.value.domains = patch.patch.value.domains.map((d) => `${d}:22`);
          for (const route of patch.patch.value.routes) route.match = { connect_matcher: {} };
        }
      }
      const model = await gatewayFor({ ...front, objects });
      const [block] = hostBlocks(front.sshConfig);
      const result = await runBytes(
        "ssh",
        ["-F", sshConfigFile("old-form", [clientBlock(block, model.port, "entryway")]), block.alias, "true"],
        { env: env() },
      );
      expect(result.status).toBe(255);
      expect(result.stderr).toContain(`refused ${block.fields.HostName}:22: 404 Not Found`);
      expect(model.log.map((d) => [d.status, d.details])).toEqual([[404, "route_not_found (NR)"]]);
    });

    it("an HTTP/1.0 CONNECT (ncat, socat, connect.exe) reaches sshd: the listener filter turns accept_http_10 on", async () => {
      const front = fronts[0];
      const model = await gatewayFor(front);
      const target = `${hostBlocks(front.sshConfig)[0].fields.HostName}:22`;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect({ host: "127.0.0.1", port: model.port }, () =>
          socket.write(`CONNECT ${target} HTTP/1.0\r\n\r\n`),
        );
        let got = "";
        socket.on("data", (chunk) => {
          got += chunk.toString("latin1");
          if (got.includes("SSH-2.0-")) {
            socket.destroy();
            resolve(got);
          }
        });
        socket.on("error", reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n\r\nSSH-2\.0-OpenSSH/);
    });

    it("TLS: a client that does not send the Gateway host as SNI finds no filter chain (connect-proxy says so in one line)", async () => {
      const { model, result } = await tlsConnectProxy(
        (port) => `127.0.0.1:${port}`,
        ["--ca-file", gatewayCertificate!.caFile],
      );
      expect(result.status).toBe(ExitCode.network);
      expect(result.stderr).toMatch(/^entryway connect-proxy: (cannot reach|the gateway 127\.0\.0\.1:\d+ closed)/);
      expect(model.log).toEqual([]);
    });

    it("TLS: connect-proxy refuses a gateway whose certificate it cannot verify, in one line", async () => {
      const { result } = await tlsConnectProxy((port) => `${GATEWAY_HOST}:${port}`);
      expect(result.status).toBe(ExitCode.tls);
      expect(result.stderr).toMatch(
        new RegExp(
          `^entryway connect-proxy: TLS error with the gateway ${GATEWAY_HOST.replace(/\./g, "\\.")}:\\d+: .*(certificate|issuer)`,
        ),
      );
    });
  },
);

describe.runIf(canRunAsOtherUser)("sshd as the workspace user (non-root, no capabilities), as in the pod", () => {
  const uid = 4242;
  const wsUser = "wsdev";
  const nrDir = path.join(dir, "nonroot");
  let nonRootSshd: ChildProcess | undefined;

  let nonRootPort = 0;

  beforeAll(async () => {
    nonRootPort = await freePort();
    mkdirSync(path.join(nrDir, "home"), { recursive: true });
    mkdirSync(path.join(nrDir, "run"));
    chmodSync(nrDir, 0o755);
    for (const sub of ["home", "run"]) spawnSync("chown", [`${uid}:${uid}`, path.join(nrDir, sub)]);
    writeFileSync(
      path.join(nrDir, "passwd"),
      `${wsUser}:x:${uid}:${uid}:workspace:${path.join(nrDir, "home")}:/bin/sh\n`,
      { mode: 0o644 },
    );
    writeFileSync(path.join(nrDir, "group"), `${wsUser}:x:${uid}:\n`, { mode: 0o644 });
    // Everything the unprivileged sshd reads is copied here, world-readable: the checkout may sit
    // under a folder other users cannot traverse (a `mktemp -d` folder is 0700).
    const config = loopbackSshdConfig(path.join(nrDir, "sshd_config"), 0o644);
    const entrypoint = path.join(nrDir, "entrypoint.sh");
    copyFileSync(imageEntrypoint, entrypoint);
    chmodSync(entrypoint, 0o644);
    // The keys stay root-owned and read-only, as a Secret volume is.
    const authorizedKeys = path.join(nrDir, "authorized_keys");
    copyFileSync(path.join(dir, "authorized_keys"), authorizedKeys);
    chmodSync(authorizedKeys, 0o444);
    const sshd = children.start(
      "sshd (non-root)",
      "setpriv",
      [
        `--reuid=${uid}`,
        `--regid=${uid}`,
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "sh",
        entrypoint,
        "-o",
        `AuthorizedKeysFile=${authorizedKeys}`,
        "-o",
        `PidFile=${path.join(nrDir, "run", "sshd.pid")}`,
      ],
      {
        PATH: process.env.PATH,
        LD_PRELOAD: NSS_WRAPPER,
        NSS_WRAPPER_PASSWD: path.join(nrDir, "passwd"),
        NSS_WRAPPER_GROUP: path.join(nrDir, "group"),
        HOME: path.join(nrDir, "home"),
        ENTRYWAY_SSHD_PORT: String(nonRootPort),
        ENTRYWAY_SSHD_CONFIG: config,
      },
    );
    nonRootSshd = sshd;
    await waitForPort(nonRootPort, "sshd (non-root)", () => sshd.exitCode === null);
    // The dev stack's gateway, its workspace's cluster tunnelling to this sshd.
    const front = fronts[0];
    const model = await gatewayFor(front, nonRootPort);
    const block = hostBlocks(front.sshConfig)[0];
    const hostKey = readFileSync(path.join(nrDir, "home", ".entryway", "ssh_host_ed25519_key.pub"), "utf8");
    writeFileSync(path.join(nrDir, "known_hosts"), `${block.fields.HostName} ${hostKey}`);
    const clientSettings = `  UserKnownHostsFile ${path.join(nrDir, "known_hosts")}\n  StrictHostKeyChecking yes\n  BatchMode yes\n`;
    const blockFor = (login: string) =>
      sshConfigBlock({
        alias: "ws-nonroot",
        hostName: block.fields.HostName,
        user: login,
        gateway: `${GATEWAY_HOST}:${model.port}`,
        identityFile: key,
      }) + clientSettings;
    writeFileSync(path.join(nrDir, "ssh.config"), blockFor(wsUser));
    writeFileSync(path.join(nrDir, "ssh-root.config"), blockFor("root"));
  });

  it("made its host key on the home volume and runs without root or capabilities", () => {
    const status = readFileSync(`/proc/${nonRootSshd!.pid}/status`, "utf8");
    expect(status).toMatch(new RegExp(`^Uid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, "m"));
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    expect(status).toMatch(/^CapPrm:\s+0+$/m);
  });

  it("logs the workspace user in through the gateway with the generated block", async () => {
    const result = await runBytes("ssh", ["-F", path.join(nrDir, "ssh.config"), "ws-nonroot", "id -u; echo $HOME"], {
      env: env(),
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout.toString()).toBe(`${uid}\n${path.join(nrDir, "home")}\n`);
  });

  it("serves scp/sftp (internal-sftp) to the workspace user through the gateway", async () => {
    const config = path.join(nrDir, "ssh.config");
    const data = randomBytes(256 * 1024);
    const local = path.join(dir, "scp-source");
    writeFileSync(local, data);
    const up = await runBytes("scp", ["-q", "-F", config, local, "ws-nonroot:copied"], { env: env() });
    expect(up.stderr).toBe("");
    expect(up.status).toBe(0);
    expect(sha256(readFileSync(path.join(nrDir, "home", "copied")))).toBe(sha256(data));
  });

  it("refuses any other user: sshd can log in only the user it runs as", async () => {
    const config = path.join(nrDir, "ssh-root.config");
    const result = await runBytes("ssh", ["-F", config, "ws-nonroot", "true"], { env: env() });
    expect(result.status).toBe(255);
    expect(result.stderr).toMatch(/Permission denied \(publickey\)/);
  });
});
