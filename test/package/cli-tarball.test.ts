/**
 * The `entryway` CLI as users install it. This packs @entryway/gateway as `npm publish` would
 * (prepack builds it) with the one workspace package it depends on (@entryway/ssh-config, which
 * the release publishes with it), installs both tarballs with `npm install -g` into a scratch
 * prefix (the other dependencies come from the registry or npm's cache), and runs the installed
 * `entryway` from the prefix's bin/: the global help, each subcommand's --help, `ssh-config`, and
 * a real `connect-proxy` through the Istio gateway model (istio-gateway-model.ts) built from the
 * chart's rendered ssh-one-workspace scenario, tunnelling to a local echo server; an undeclared
 * workspace is refused with the one-line status.
 *
 * Everything listens on 127.0.0.1 only.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { sshConfigBlock } from "@entryway/ssh-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { npmPack, run, type PackedPackage } from "../../testkit/harness/npm";
import { run as runText } from "../../testkit/harness/process";
import { buildGatewayEnvoy, startGatewayModel, type RunningGatewayModel } from "../ssh/istio-gateway-model";

const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-cli-"));
const prefix = path.join(scratch, "prefix");
const entrywayBin = path.join(prefix, "bin", "entryway");
let gatewayPackage: PackedPackage;
const gatewayVersion = (
  JSON.parse(readFileSync(path.join(repoRoot, "gateway/package.json"), "utf8")) as { version: string }
).version;

/** Runs the installed `entryway` (the gateway model lives in this process). */
function entryway(args: string[], input = "") {
  // The prefix's bin/ first, as after `npm install -g`; the CLI's `#!/usr/bin/env node` finds this Node.
  return runText(entrywayBin, args, {
    input,
    env: { ...process.env, PATH: `${path.dirname(entrywayBin)}:${path.dirname(process.execPath)}:${process.env.PATH}` },
  });
}

beforeAll(() => {
  const packed = npmPack(scratch, ["@entryway/ssh-config", "@entryway/gateway"]);
  gatewayPackage = packed.find((p) => p.name === "@entryway/gateway")!;
  const install = run(
    "npm",
    [
      "install",
      "--global",
      "--prefix",
      prefix,
      ...packed.map((p) => p.tarball),
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
    ],
    scratch,
  );
  if (!install.ok) throw new Error(`npm install -g of the tarballs failed: ${install.output}`);
}, 600_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// login and logout load openid-client: their --help proves the installed package brings it.
const SUBCOMMANDS = [
  "enter",
  "ssh-config",
  "connect-proxy",
  "serve",
  "config",
  "version",
  "completion",
  "login",
  "logout",
  "ls",
  "recordings",
];

describe("npm install -g @entryway/gateway", () => {
  it("packs the built CLI, the protocol's proto file and the web terminal, without sources or tests", () => {
    expect(gatewayPackage.files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "dist/cli/main.js",
        "dist/server.js",
        "proto/message.proto",
        "dist/web/index.html",
      ]),
    );
    expect(
      gatewayPackage.files.filter(
        (f) => /^(src|test|bench|web)\//.test(f) || (f.endsWith(".ts") && !f.endsWith(".d.ts")),
      ),
    ).toEqual([]);
  });

  it("puts `entryway` on the prefix's bin/, and its help lists every subcommand", async () => {
    expect(existsSync(entrywayBin)).toBe(true);
    const help = await entryway(["--help"]);
    expect(help).toMatchObject({ status: 0, stderr: "" });
    for (const name of SUBCOMMANDS) expect(help.stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
  });

  it.each(SUBCOMMANDS)("`entryway %s --help` prints its usage and exits 0", async (name) => {
    const result = await entryway([name, "--help"]);
    expect(result).toMatchObject({ status: 0, stderr: "" });
    expect(result.stdout).toMatch(new RegExp(`^usage: entryway ${name}( |\\n)`));
  });

  it("`entryway --version` names the installed package's version (read from the package's package.json)", async () => {
    const result = await entryway(["--version", "--client"]);
    expect(result).toEqual(expect.objectContaining({ status: 0, stdout: `client: ${gatewayVersion}\n`, stderr: "" }));
  });

  it("an unknown subcommand is named on stderr with exit 64 (usage)", async () => {
    const result = await entryway(["nosuch"]);
    expect(result.status).toBe(64);
    expect(result.stderr.split("\n")[0]).toBe("entryway: unknown command nosuch");
  });

  it("`entryway ssh-config` prints the block the components output", async () => {
    const result = await entryway([
      "ssh-config",
      "--gateway",
      "ssh.example.com:2222",
      "alice=entryway-ws-alice.dev.svc.cluster.local",
    ]);
    expect(result).toMatchObject({ status: 0, stderr: "" });
    expect(result.stdout).toBe(
      sshConfigBlock({
        alias: "alice",
        hostName: "entryway-ws-alice.dev.svc.cluster.local",
        user: "dev",
        gateway: "ssh.example.com:2222",
      }),
    );
  });
});

describe("the installed `entryway connect-proxy` through the Istio gateway model of the rendered chart", () => {
  let echo: net.Server;
  let model: RunningGatewayModel;
  let workspace = "";

  beforeAll(async () => {
    echo = net.createServer((socket) => {
      socket.on("error", () => socket.destroy());
      socket.write("SSH-2.0-echo\r\n");
      socket.pipe(socket);
    });
    const echoPort = await new Promise<number>((resolve) =>
      echo.listen(0, "127.0.0.1", () => resolve((echo.address() as net.AddressInfo).port)),
    );
    const objects = helmTemplate(helmBinaries()[0], path.join(repoRoot, "charts/entryway"), {
      valuesFiles: [path.join(repoRoot, "charts/entryway/ci/ssh-one-workspace.yaml")],
    });
    const envoy = buildGatewayEnvoy({ objects, gatewayName: "entryway-connect-gateway" });
    expect(envoy.rejected).toBeUndefined();
    const workspaceClusters = [...envoy.clusters].filter((c) => c.startsWith("outbound|22||"));
    expect(workspaceClusters).toHaveLength(1);
    workspace = workspaceClusters[0].split("||")[1];
    model = await startGatewayModel(envoy, { [workspaceClusters[0]]: echoPort });
  });

  afterAll(async () => {
    await model?.close();
    await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
  });

  it("tunnels to the declared workspace: its greeting and the echoed stdin come back, and stdin's end ends it", async () => {
    const result = await entryway(
      ["connect-proxy", `127.0.0.1:${model.port}`, workspace, "22"],
      "hello through the installed CLI\n",
    );
    expect(result).toEqual({ status: 0, stdout: "SSH-2.0-echo\r\nhello through the installed CLI\n", stderr: "" });
    expect(model.log.at(-1)).toMatchObject({ method: "CONNECT", authority: `${workspace}:22`, status: 200 });
  });

  it("names the refusal of an undeclared workspace in one line and exits 66 (not found)", async () => {
    const undeclared = workspace.replace(/^[^.]+/, "nosuch");
    const result = await entryway(["connect-proxy", `127.0.0.1:${model.port}`, undeclared, "22"]);
    expect(result).toEqual({
      status: 66,
      stdout: "",
      stderr: `entryway connect-proxy: the gateway 127.0.0.1:${model.port} refused ${undeclared}:22: 404 Not Found (no workspace is declared at that address on this gateway)\n`,
    });
    expect(model.log.at(-1)).toMatchObject({ authority: `${undeclared}:22`, status: 404 });
  });
});
