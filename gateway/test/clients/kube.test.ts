// Kubernetes target forms in both clients, against a gateway with the Kubernetes backend and the
// Kubernetes authorizer (TokenReview + SubjectAccessReview) talking to the gateway engineer's
// STAND-IN FOR THE KUBERNETES API SERVER AND KUBELET (testkit/gateway/kube-standin.ts: it runs real shells in
// real PTYs on this machine; no cluster runs here). The CLI enters a pod's container and a
// StatefulSet instance and is refused a namespace; the web page's picker does the same by form.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../../src/backends/kubernetes.js";
import { ExitCode } from "../../src/cli/enter-options.js";
import type { Gateway } from "../../src/server.js";
import { webAssets } from "../../src/web-assets.js";
import { buildWebAssets } from "../../web/build.js";
import { kubernetesGateway } from "../../../testkit/harness/kubernetes-gateway.js";
import { startKubeStandin, type KubeStandin } from "../../../testkit/gateway/kube-standin.js";
import { itNeeding } from "../../../testkit/gateway/tools.js";
import { CHROMIUM, launchChromium, waitForText } from "../../../testkit/gateway/browser.js";
import { cleanEnv, runCli } from "../../../testkit/gateway/cli-harness.js";

const DEBUG_IMAGE = "registry.example.com/debug/busybox:1.36";

describe("Kubernetes targets in the CLI and the web page (stand-in API server + kubelet)", () => {
  let kube: KubeStandin;
  let gateway: Gateway;
  let base: string;
  let assets: string;
  let home: string;

  beforeAll(async () => {
    kube = await startKubeStandin({
      protocol: "v5.channel.k8s.io",
      serviceAccountToken: "gateway-sa-token",
      pods: [
        { namespace: "team-a", name: "api-1", containers: ["app", "sidecar"] },
        { namespace: "team-a", name: "web-0", containers: ["app"], owner: { kind: "StatefulSet", name: "web" } },
        { namespace: "team-a", name: "web-1", containers: ["app"], owner: { kind: "StatefulSet", name: "web" } },
        { namespace: "team-b", name: "db-0", containers: ["db"] },
        { namespace: "team-a", name: "distroless-0", containers: ["app"], distroless: true },
      ],
      statefulSets: [{ namespace: "team-a", name: "web" }],
      users: { "alice-token": "alice" },
      execAllowed: { alice: ["team-a"] },
      debugAllowed: { alice: ["team-a"] },
    });
    assets = mkdtempSync(join(tmpdir(), "entryway-web-kube-"));
    await buildWebAssets(assets);
    gateway = kubernetesGateway(loadKubeConfig(kube.kubeconfigPath), {
      settings: { debugImages: [DEBUG_IMAGE] },
      routes: (config) => [webAssets({ config, dir: assets })],
    });
    base = `http://127.0.0.1:${(await gateway.listen()).port}`;
    home = mkdtempSync(join(tmpdir(), "entryway-cli-home-"));
  });
  afterAll(async () => {
    await gateway?.shutdown("test over");
    await kube?.stop();
    for (const dir of [assets, home]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("CLI: a pod's container, a StatefulSet instance, a refused namespace, a missing pod", async () => {
    const env = cleanEnv(home, { ENTRYWAY_GATEWAY: base, ENTRYWAY_TOKEN: "alice-token" });
    // Input is piped, which picks pipe mode; --tty asks for the terminal an interactive user gets.
    const pod = await runCli(["enter", "--tty", "team-a/api-1/sidecar"], { env, input: "echo pod-$((6*7))\nexit 5\n" });
    expect(pod.stdout).toMatch(/^pod-42\r?$/m);
    expect(pod).toMatchObject({ code: 5, stderr: "" });
    expect(kube.execs.at(-1)).toMatchObject({ namespace: "team-a", pod: "api-1", container: "sidecar", tty: true });

    const instance = await runCli(["enter", "team-a/statefulset/web#1"], { env, input: "exit 6\n" });
    expect(instance).toMatchObject({ code: 6, stderr: "" });
    expect(kube.execs.at(-1)).toMatchObject({ pod: "web-1", container: "app" });

    const execsBefore = kube.execs.length;
    const refused = await runCli(["enter", "team-b/db-0"], { env });
    expect(refused.code).toBe(ExitCode.denied);
    expect(refused.stderr).toMatch(/^entryway: permission denied: [^\n]+\n$/);
    expect(kube.execs.length).toBe(execsBefore); // refused before any exec

    const missing = await runCli(["enter", "team-a/nope", "-c", "app"], { env });
    expect(missing.code).toBe(ExitCode.notFound);
    expect(missing.stderr).toMatch(/^entryway: [^\n]*nope[^\n]*\n$/);
  });

  it("CLI: --debug=auto enters a debug container in a distroless pod; an image off the gateway's list is refused", async () => {
    const env = cleanEnv(home, { ENTRYWAY_GATEWAY: base, ENTRYWAY_TOKEN: "alice-token" });
    const debug = await runCli(["enter", "--tty", "--debug=auto", "team-a/distroless-0"], {
      env,
      input: "echo debug-$((6*7))\nexit 4\n",
    });
    expect(debug.stdout).toMatch(/^debug-42\r?$/m);
    expect(debug).toMatchObject({ code: 4, stderr: "" });
    const [container] = kube.ephemeralContainers("team-a/distroless-0");
    expect(container).toMatchObject({ image: DEBUG_IMAGE, targetContainerName: "app" });
    expect(kube.execs.at(-1)).toMatchObject({ pod: "distroless-0", container: container!.name });

    const patches = kube.ephemeralPatches.length;
    const refused = await runCli(["enter", "--debug=busybox", "team-a/web-0"], { env });
    expect(refused.code).toBe(ExitCode.badRequest);
    expect(refused.stderr).toMatch(/^entryway: debug image "busybox" is not allowed on this gateway[^\n]*\n$/);
    expect(kube.ephemeralPatches.length).toBe(patches);
  });

  itNeeding(
    { chromium: existsSync(CHROMIUM) },
    "web: the picker opens a pod's container, then a workload instance, each as a deep link",
    async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 900, height: 500 } });
        await page.goto(`${base}/`);
        await page.locator("#token").fill("alice-token");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.locator("#namespace").fill("team-a");
        await page.locator("#pod").fill("api-1");
        await page.locator("#container").fill("sidecar");
        await page.getByRole("button", { name: "Open" }).click();
        await expect.poll(() => page.locator("#status").textContent(), { timeout: 30_000 }).toBe("connected");
        await page.keyboard.type("echo picked-$((40+2))\n");
        await waitForText(page, /^picked-42$/m);
        expect(new URL(page.url()).search).toBe("?namespace=team-a&pod=api-1&container=sidecar");
        expect(kube.execs.at(-1)).toMatchObject({ pod: "api-1", container: "sidecar" });

        await page.locator("#bar-other").click();
        await page.getByLabel("Workload and instance").check();
        await page.locator("#namespace").fill("team-a");
        await page.locator("#workload").fill("statefulset/web");
        await page.locator("#instance").fill("1");
        await page.locator("#container").fill("");
        await page.getByRole("button", { name: "Open" }).click();
        await expect.poll(() => page.locator("#status").textContent(), { timeout: 30_000 }).toBe("connected");
        await page.keyboard.type("echo instance-$((1+1))\n");
        await waitForText(page, /^instance-2$/m);
        expect(new URL(page.url()).search).toBe("?namespace=team-a&workload=statefulset%2Fweb&instance=1");
        expect(kube.execs.at(-1)).toMatchObject({ pod: "web-1", container: "app" });
      } finally {
        await browser.close();
      }
    },
  );
});
