/**
 * The end-to-end workflow (.github/workflows/e2e-kind.yml) needs a Docker engine and a cluster,
 * which this machine does not have; its steps are scripts (scripts/e2e/), and what of them can run
 * here runs here:
 *  - every step of the workflow is one of those scripts, and every script is bash with
 *    `set -euo pipefail` that bash parses;
 *  - scripts/e2e/values.yaml (the chart as the workflow installs it) passes helm lint --strict
 *    under Helm 4 and 3 and renders objects valid against the upstream schemas, test hooks too;
 *  - ssh-through-gateway.sh: ssh with the built-in ProxyCommand through the Istio gateway model
 *    (test/ssh/istio-gateway-model.ts) built from that rendering, to the workspace image's own
 *    sshd_config and entrypoint on loopback; and it fails when the gateway refuses the workspace;
 *  - exec-through-gateway.sh: `entryway enter` through a gateway on the Kubernetes backend and
 *    authorizer, against the stand-in API server and kubelet (testkit/gateway/kube-standin.ts,
 *    real processes in a real PTY); and it fails with a token the authorizer refuses.
 * Needs ssh, sshd, ssh-keygen and bash; under CI=true a missing tool fails the suite.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { kubernetesAuthorizer } from "../../gateway/src/auth/kubernetes";
import { kubernetesBackend, loadKubeConfig } from "../../gateway/src/backends/kubernetes";
import { defaultConfig } from "../../gateway/src/config";
import { startGateway } from "../../testkit/gateway/gateway";
import { startKubeStandin } from "../../testkit/gateway/kube-standin";
import { helmBinaries, helmLint, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { freePort, waitForPort } from "../../testkit/harness/net";
import { run } from "../../testkit/harness/process";
import { assertValidObjects } from "../../testkit/harness/validate";
import { buildGatewayEnvoy, startGatewayModel } from "../ssh/istio-gateway-model";
import { Children, entrypointSshd, loopbackSshdConfig, missingTools, userKey } from "../ssh/workspace-sshd";

const e2eDir = path.join(repoRoot, "scripts/e2e");
const chart = path.join(repoRoot, "charts/entryway");
const values = path.join(e2eDir, "values.yaml");
const workflow = parse(readFileSync(path.join(repoRoot, ".github/workflows/e2e-kind.yml"), "utf8")) as {
  jobs: Record<string, { steps: { run?: string; uses?: string }[] }>;
};
const scripts = readdirSync(e2eDir).filter((f) => f.endsWith(".sh"));
const read = (script: string) => readFileSync(path.join(e2eDir, script), "utf8");

describe("the e2e workflow's steps are the repository's scripts", () => {
  const runs = Object.values(workflow.jobs).flatMap((job) => job.steps.flatMap((step) => (step.run ? [step.run] : [])));

  it("every run step past npm ci is one script of scripts/e2e, and every runnable script is reached", () => {
    const stepScripts = runs
      .filter((run) => run !== "npm ci --no-audit --no-fund")
      .map((run) => /^bash scripts\/e2e\/([\w-]+\.sh)$/.exec(run)?.[1] ?? `not a script: ${run}`);
    const called = new Set(
      stepScripts.flatMap((script) => [
        script,
        ...[...read(script).matchAll(/scripts\/e2e\/([\w-]+\.sh)/g)].map((m) => m[1]),
      ]),
    );
    expect(stepScripts.every((s) => scripts.includes(s))).toBe(true);
    // lib.sh is sourced by the others.
    expect(scripts.filter((s) => !called.has(s))).toEqual(["lib.sh"]);
    expect(stepScripts).toEqual(
      expect.arrayContaining(["install-chart.sh", "ssh-in-cluster.sh", "exec-in-cluster.sh", "pulumi-up.sh"]),
    );
    expect(read("install-chart.sh")).toMatch(/^helm test /m);
  });

  it.each(scripts)("%s is bash with set -euo pipefail, and parses", (script) => {
    const text = read(script);
    if (script !== "lib.sh") {
      expect(text.startsWith("#!/usr/bin/env bash\n")).toBe(true);
      expect(text).toMatch(/^set -euo pipefail$/m);
    }
    const parsed = spawnSync("bash", ["-n", path.join(e2eDir, script)], { encoding: "utf8" });
    expect(parsed.stderr).toBe("");
    expect(parsed.status).toBe(0);
  });
});

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))(
  "scripts/e2e/values.yaml, %s",
  (_label, helm) => {
    it("lints strictly and renders valid objects, with every part and its test hook", async () => {
      const lint = helmLint(helm, chart, [values]);
      expect(lint.output).toMatch(/0 chart\(s\) failed/);
      expect(lint.ok).toBe(true);
      const objects = helmTemplate(helm, chart, { valuesFiles: [values], tests: true });
      await assertValidObjects(objects);
      const testParts = objects
        .filter((o) => o.kind === "Pod")
        .map((o) => o.metadata?.labels?.["app.kubernetes.io/component"])
        .sort();
      expect(testParts).toEqual(["ansibleforms", "connect-gateway", "exec-gateway"]);
    });
  },
);

// ----- the scripts that run here -----

const missing = missingTools(
  "test/e2e/scripts.test.ts: script runs",
  ["ssh", "ssh-keygen", "/usr/sbin/sshd", "bash"],
  "the tools the script runs need (CI)",
);

const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-e2e-scripts-"));
chmodSync(scratch, 0o755);
const children = new Children();
afterAll(() => {
  children.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs a script without blocking: the gateway model and the gateway serve from this process. */
const runScript = (script: string, env: Record<string, string>) =>
  run("bash", [path.join(e2eDir, script)], { env: { ...process.env, E2E_DIR: path.join(scratch, "e2e"), ...env } });

describe.runIf(missing.length === 0)("the e2e scripts, run here", () => {
  it("ssh-through-gateway.sh: through the modelled gateway of the installed chart to the workspace image's sshd; refused when the workspace is not declared", async () => {
    const key = userKey(scratch);
    const sshPort = await freePort();
    const hostKeyDir = path.join(scratch, "hostkey");
    const command = entrypointSshd({
      port: sshPort,
      dir: scratch,
      config: loopbackSshdConfig(path.join(scratch, "sshd_config")),
      hostKeyDir,
      pidFile: path.join(scratch, "sshd.pid"),
    });
    const sshd = children.start("sshd", command.command, command.args, command.env);
    await waitForPort(sshPort, "sshd", () => sshd.exitCode === null);

    const objects = helmTemplate(helmBinaries()[0], chart, { valuesFiles: [values] });
    const envoy = buildGatewayEnvoy({ objects, gatewayName: "entryway-connect-gateway" });
    expect(envoy.rejected).toBeUndefined();
    const clusters = [...envoy.clusters].filter((c) => c.startsWith("outbound|22||"));
    expect(clusters).toEqual(["outbound|22||entryway-ws-e2e.entryway.svc.cluster.local"]);
    const model = await startGatewayModel(envoy, { [clusters[0]]: sshPort });
    try {
      const workspace = "entryway-ws-e2e.entryway.svc.cluster.local";
      const knownHosts = path.join(scratch, "known_hosts");
      writeFileSync(
        knownHosts,
        `${workspace} ${readFileSync(path.join(hostKeyDir, "ssh_host_ed25519_key.pub"), "utf8")}`,
      );
      const env = {
        GATEWAY: `127.0.0.1:${model.port}`,
        SSH_USER: os.userInfo().username,
        IDENTITY_FILE: key,
        KNOWN_HOSTS: knownHosts,
      };

      const through = await runScript("ssh-through-gateway.sh", { ...env, WORKSPACE: workspace });
      expect(through.stderr).toBe("");
      expect(through).toMatchObject({
        status: 0,
        stdout: `ssh through 127.0.0.1:${model.port} to ${os.userInfo().username}@${workspace}: ok\n`,
      });

      const refused = await runScript("ssh-through-gateway.sh", {
        ...env,
        WORKSPACE: "entryway-ws-nobody.entryway.svc.cluster.local",
      });
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain("refused entryway-ws-nobody.entryway.svc.cluster.local:22: 404 Not Found");
      expect(model.log.map((d) => d.status)).toEqual([200, 404]);
    } finally {
      await model.close();
    }
  });

  it("exec-through-gateway.sh: entryway enter through a gateway on the Kubernetes backend runs a real shell; a refused token fails", async () => {
    const kube = await startKubeStandin({
      protocol: "v5.channel.k8s.io",
      serviceAccountToken: "gateway-sa-token",
      pods: [{ namespace: "entryway-e2e-target", name: "e2e-target", containers: ["app"] }],
      users: { "e2e-user-token": "system:serviceaccount:entryway-e2e-target:e2e-user" },
      execAllowed: { "system:serviceaccount:entryway-e2e-target:e2e-user": ["entryway-e2e-target"] },
    });
    const kubeConfig = loadKubeConfig(kube.kubeconfigPath);
    const gateway = await startGateway(
      kubernetesBackend(kubeConfig),
      kubernetesAuthorizer(kubeConfig, defaultConfig.tokenAudiences),
    );
    try {
      const tokenFile = path.join(scratch, "token");
      const env = {
        GATEWAY_URL: gateway.url({}).replace(/\?$/, ""),
        TOKEN_FILE: tokenFile,
        TARGET: "entryway-e2e-target/e2e-target/app",
      };
      writeFileSync(tokenFile, "e2e-user-token\n", { mode: 0o600 });
      const entered = await runScript("exec-through-gateway.sh", env);
      expect(entered.stderr).toBe("");
      expect(entered).toMatchObject({ status: 0, stdout: `exec through ${env.GATEWAY_URL} into ${env.TARGET}: ok\n` });
      // The script pipes the commands in, so `entryway enter` takes pipe mode: an exec without a TTY.
      expect(kube.execs.map((e) => [e.namespace, e.pod, e.container, e.tty])).toEqual([
        ["entryway-e2e-target", "e2e-target", "app", false],
      ]);

      writeFileSync(tokenFile, "someone-else\n");
      const denied = await runScript("exec-through-gateway.sh", env);
      expect(denied.status).not.toBe(0);
      expect(denied.stderr).toMatch(/^entryway: /m);
      expect(kube.execs).toHaveLength(1);
    } finally {
      await gateway.stop();
      await kube.stop();
    }
  });
});
