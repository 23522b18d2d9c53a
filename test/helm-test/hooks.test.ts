/**
 * The chart's `helm test` hooks (templates/tests/): one test pod per enabled part, each valid
 * against the upstream schemas, restricted, token-less, admitted by the NetworkPolicies the chart
 * renders, and each script proven to tell success from failure by running it here, as rendered,
 * against the real thing or its model:
 *  - the exec gateway's readiness check against a started gateway (200 when its backend answers,
 *    a failure when it does not);
 *  - the CONNECT check against the Istio gateway model (test/ssh/istio-gateway-model.ts) built
 *    from the rendered manifests: an undeclared target is refused with 404 (the test passes), a
 *    declared workspace is tunnelled (the same script fails), plain and with TLS (where curl must
 *    send the Gateway host as SNI, reaching the Service's address through --resolve).
 * Needs curl and openssl; under CI=true a missing tool fails the suite.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { imageReference } from "../../components/shared/image";
import { fakeBackend } from "../../testkit/gateway/fake-backend";
import { startGateway, tokenAuthorizer } from "../../testkit/gateway/gateway";
import { privateCaCertificate } from "../../testkit/harness/certificates";
import { chartScenarios, helmBinaries, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { run } from "../../testkit/harness/process";
import { allViolations, asResource } from "../policies/run-policies";
import { buildGatewayEnvoy, startGatewayModel } from "../ssh/istio-gateway-model";
import { allows, networkPolicies, type PodEndpoint } from "../../testkit/harness/network-policy";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const chart = path.join(repoRoot, "charts/entryway");
const scenarios = chartScenarios().find((c) => c.chart === chart)!.scenarios;
const values = parse(readFileSync(path.join(chart, "values.yaml"), "utf8")) as Obj;
const isHook = (o: Obj) => o.metadata?.annotations?.["helm.sh/hook"] !== undefined;
const testPods = (objects: readonly Obj[]) => objects.filter((o) => isHook(o) && o.kind === "Pod");
const partOf = (o: Obj) => o.metadata.labels["app.kubernetes.io/component"] as string;

/** The parts a scenario enables, as the test pods name them. */
function enabledParts(scenario: string): string[] {
  const v = parse(readFileSync(scenario, "utf8")) as Obj;
  return [
    ...(v.connectGateway?.enabled ? ["connect-gateway"] : []),
    ...(v.ansibleForms?.enabled ? ["ansibleforms"] : []),
    ...(v.execGateway?.enabled ? ["exec-gateway"] : []),
  ].sort();
}

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("helm test hooks, %s", (_label, helm) => {
  it.each(scenarios.map((s) => [path.basename(s), s]))(
    "%s: one test pod per enabled part, valid, restricted",
    async (_name, scenario) => {
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario], tests: true });
      const hooks = objects.filter(isHook);
      const pods = testPods(objects);
      expect(pods.map(partOf).sort()).toEqual(enabledParts(scenario));
      // Hooks are only test hooks, and install leaves them out.
      for (const hook of hooks) {
        expect(hook.metadata!.annotations).toMatchObject({
          "helm.sh/hook": "test",
          "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
        });
      }
      const installed = helmTemplate(helm, chart, { valuesFiles: [scenario] });
      expect(installed.filter(isHook)).toEqual([]);
      expect(installed.length).toBe(objects.length - hooks.length);

      await assertValidObjects(hooks);
      expect(await allViolations(hooks.map(asResource))).toEqual([]);
      for (const pod of pods) {
        expect(pod.spec).toMatchObject({
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: values.tests.runAsUser },
        });
        expect(pod.metadata.labels["sidecar.istio.io/inject"]).toBe("false");
        const [container] = pod.spec.containers;
        expect(pod.spec.containers).toHaveLength(1);
        // The chart's entryway.image renders what the components' imageReference makes of the same values.
        const own = parse(readFileSync(scenario, "utf8")) as Obj;
        expect(container.image).toBe(imageReference(values.tests.image, own.tests?.image, own.global));
        expect(container.resources).toEqual(values.tests.resources);
        expect(container.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ["ALL"] },
        });
      }
    },
  );
});

// ----- NetworkPolicies -----

/** The pods a Service leads to (its selector over the workload templates) and the port it reaches. */
function serviceTarget(objects: Obj[], host: string, servicePort: number): { pods: PodEndpoint[]; port: number } {
  const [name, namespace] = host.split(".");
  const service = objects.find(
    (o) => o.kind === "Service" && o.metadata.name === name && o.metadata.namespace === namespace,
  );
  if (!service) throw new Error(`no Service ${name}.${namespace}`);
  const port = service.spec.ports.find((p: Obj) => p.port === servicePort);
  expect(port, `${name} port ${servicePort}`).toBeDefined();
  const templates = objects
    .filter((o) => ["Deployment", "StatefulSet"].includes(o.kind) && o.metadata.namespace === namespace)
    .map((o) => o.spec.template);
  const selected = templates.filter((t) =>
    Object.entries(service.spec.selector as Record<string, string>).every(([k, v]) => t.metadata.labels[k] === v),
  );
  expect(selected.length, `pods behind ${name}`).toBeGreaterThan(0);
  const pods = selected.map((t) => ({
    namespace,
    labels: t.metadata.labels,
    ports: t.spec.containers.flatMap((c: Obj) => c.ports ?? []),
  }));
  const targetPort = port.targetPort ?? port.port;
  return {
    pods,
    port:
      typeof targetPort === "number"
        ? targetPort
        : pods[0].ports.find((p: Obj) => p.name === targetPort)!.containerPort,
  };
}

/**
 * Where a test pod connects: the host and port of its URL or proxy; with --resolve, the Service
 * whose <NAME>_SERVICE_HOST variable gives the address (upper case, "-" as "_").
 */
function testTarget(pod: Obj): { host: string; port: number } {
  const env = Object.fromEntries(pod.spec.containers[0].env.map((e: Obj) => [e.name, e.value])) as Record<
    string,
    string
  >;
  const url = new URL(env.PROXY ?? env.URL);
  if (env.PROXY_RESOLVE) {
    const service = /:\$\(([A-Z0-9_]+)_SERVICE_HOST\)$/.exec(env.PROXY_RESOLVE)![1].toLowerCase().replace(/_/g, "-");
    return { host: `${service}.${pod.metadata.namespace}.svc`, port: Number(url.port) };
  }
  return { host: url.hostname, port: Number(url.port || 80) };
}

describe("the NetworkPolicies admit each test pod to its target (Helm 4)", () => {
  const helm = helmBinaries()[0];
  const asPod = (pod: Obj): PodEndpoint => ({ namespace: pod.metadata.namespace, labels: pod.metadata.labels });
  const policiesIn = (objects: Obj[]) => networkPolicies(objects as ObjectLike[]);

  it.each(scenarios.map((s) => [path.basename(s), s]))("%s", (_name, scenario) => {
    const objects = helmTemplate(helm, chart, { valuesFiles: [scenario], tests: true }) as Obj[];
    for (const pod of testPods(objects)) {
      const { host, port } = testTarget(pod);
      const target = serviceTarget(objects, host, port);
      for (const targetPod of target.pods) {
        // Both ends: the test pod's egress (its namespace denies by default) and the target's ingress.
        expect(
          allows(policiesIn(objects), asPod(pod), targetPod, target.port),
          `${pod.metadata.name} -> ${host}:${port}`,
        ).toBe(true);
      }
    }
  });

  it("the model rejects what the hook policies exist for: without them no test pod reaches its target", () => {
    const cases = [
      ["exec-gateway-kubernetes.yaml", "exec-gateway"],
      ["exec-gateway-oidc.yaml", "exec-gateway"],
      ["ansibleforms-remote.yaml", "ansibleforms"],
      ["ansibleforms-sidecar.yaml", "ansibleforms"],
      ["ssh-one-workspace.yaml", "connect-gateway"],
      ["ssh-tls.yaml", "connect-gateway"],
    ];
    for (const [scenario, part] of cases) {
      const objects = helmTemplate(helm, chart, {
        valuesFiles: [path.join(chart, "ci", scenario)],
        tests: true,
      }) as Obj[];
      const pod = testPods(objects).find((p) => partOf(p) === part)!;
      const { host, port } = testTarget(pod);
      const target = serviceTarget(objects, host, port);
      const installedOnly = policiesIn(objects.filter((o) => !isHook(o)));
      expect(installedOnly.length).toBeGreaterThan(0);
      expect(
        target.pods.map((t) => allows(installedOnly, asPod(pod), t, target.port)),
        scenario,
      ).toEqual(target.pods.map(() => false));
      // A pod without the test labels is not let in by the hook policy either.
      const stranger = { ...asPod(pod), labels: { ...pod.metadata.labels, "app.kubernetes.io/component": "other" } };
      expect(
        target.pods.map((t) => allows(policiesIn(objects), stranger, t, target.port)),
        scenario,
      ).toEqual(target.pods.map(() => false));
    }
  });
});

// ----- the scripts, run here -----

const inCi = process.env.CI === "true";
const missing = ["curl", "openssl"].filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0);
if (missing.length > 0 && !inCi)
  process.stderr.write(`test/helm-test/hooks.test.ts: script runs skipped, missing: ${missing.join(", ")}\n`);

describe.runIf(inCi)("the tools the script runs need (CI)", () => {
  it("are installed", () => expect(missing).toEqual([]));
});

/**
 * Kubernetes' $(VAR) expansion of command and env values (kubernetes/kubernetes
 * third_party/forked/golang/expansion/expand.go): $(NAME) of a defined variable is replaced,
 * $$ becomes $, anything else stays as written.
 */
function kubeExpand(input: string, vars: Record<string, string>): string {
  return input.replace(/\$\$|\$\(([^)]*)\)/g, (match, name: string | undefined) =>
    match === "$$" ? "$" : name !== undefined && name in vars ? vars[name] : match,
  );
}

/**
 * Runs a test pod's container as the kubelet would start it (command and env expanded, the
 * Service environment variables given), with its in-cluster addresses swapped for loopback ones.
 * Asynchronous: the gateway model serves from this process.
 */
function runTestPod(
  pod: Obj,
  options: {
    serviceEnv?: Record<string, string>;
    rewrite: (name: string, value: string) => string;
    extraEnv?: Record<string, string>;
  },
) {
  const container = pod.spec.containers[0];
  const serviceEnv = pod.spec.enableServiceLinks ? (options.serviceEnv ?? {}) : {};
  const env: Record<string, string> = { ...serviceEnv };
  for (const { name, value } of container.env as { name: string; value: string }[])
    env[name] = options.rewrite(name, kubeExpand(value, env));
  const [command, ...args] = (container.command as string[]).map((part) => kubeExpand(part, env));
  return run(command, args, { env: { PATH: process.env.PATH, ...env, ...options.extraEnv } });
}

const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-helm-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.runIf(missing.length === 0)("the test scripts tell success from failure, run here as rendered", () => {
  const helm = helmBinaries()[0];
  const podFor = (scenario: string, part: string) =>
    testPods(helmTemplate(helm, chart, { valuesFiles: [path.join(chart, "ci", scenario)], tests: true })).find(
      (p) => partOf(p) === part,
    )!;

  it("exec gateway readiness: passes while the gateway's backend answers, fails when it does not", async () => {
    const pod = podFor("exec-gateway-kubernetes.yaml", "exec-gateway");
    const backend = fakeBackend();
    const gateway = await startGateway(backend, tokenAuthorizer());
    try {
      // The rendered URL names the Service's monitoring port (9090), where /readyz is served.
      expect(pod.spec.containers[0].env.find((e: Obj) => e.name === "URL").value).toMatch(
        /^http:\/\/[^/]+:9090\/readyz$/,
      );
      const rewrite = (name: string, value: string) =>
        name === "URL" ? value.replace(/^http:\/\/[^/]+/, gateway.monitoring) : value;
      const ready = await runTestPod(pod, { rewrite });
      expect(ready).toMatchObject({ status: 0, stdout: `ready: ${gateway.monitoring}/readyz answered 200\n` });
      backend.check = async () => {
        throw new Error("the API server is away");
      };
      // No retries here: a 503 is retried in the cluster while a replica starts.
      const down = await runTestPod(pod, { rewrite, extraEnv: { RETRIES: "0" } });
      expect(down).toMatchObject({
        status: 1,
        stderr: `not ready: ${gateway.monitoring}/readyz answered 503 (expected 200)\n`,
      });
    } finally {
      await gateway.stop();
    }
  });

  it.each([
    ["ssh-one-workspace.yaml", false],
    ["ssh-tls.yaml", true],
  ] as const)(
    "CONNECT through the modelled gateway of %s: the rendered check passes on an undeclared target and fails on a declared one",
    async (scenario, tls) => {
      const installed = helmTemplate(helm, chart, { valuesFiles: [path.join(chart, "ci", scenario)] });
      const pod = podFor(scenario, "connect-gateway");
      const envoy = buildGatewayEnvoy({ objects: installed, gatewayName: "entryway-connect-gateway" });
      expect(envoy.rejected).toBeUndefined();
      expect(Boolean(envoy.sniHosts)).toBe(tls);
      // Every workspace's endpoint: a server that greets like sshd.
      const sshLike = net.createServer((socket) => socket.end("SSH-2.0-stand-in\r\n")).listen(0, "127.0.0.1");
      await new Promise((r) => sshLike.once("listening", r));
      const endpointPort = (sshLike.address() as net.AddressInfo).port;
      const endpoints = Object.fromEntries(
        [...envoy.clusters].filter((c) => c.startsWith("outbound|22||")).map((c) => [c, endpointPort]),
      );
      let tlsMaterial: { cert: Buffer; key: Buffer } | undefined;
      if (tls) {
        // The check does not judge the certificate (--proxy-insecure): any the gateway serves will do.
        const { certFile, keyFile } = privateCaCertificate(mkdtempSync(path.join(scratch, "gw-")), ["ssh.example.com"]);
        tlsMaterial = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
      }
      const model = await startGatewayModel(envoy, endpoints, tlsMaterial);
      try {
        const declared = `${[...envoy.clusters].find((c) => c.startsWith("outbound|22||"))!.split("|")[3]}:22`;
        const port = String(pod.spec.containers[0].env.find((e: Obj) => e.name === "PROXY").value)
          .split(":")
          .at(-1)!;
        // The Service's address is loopback, and its port the model's; with TLS the Gateway's host
        // stays the name curl sends as SNI, and only --resolve says where it is.
        const rewrite = (target?: string) => (name: string, value: string) => {
          if (name === "TARGET" && target) return target;
          if (name === "PROXY")
            return tls
              ? value.replace(`:${port}`, `:${model.port}`)
              : value.replace(/\/\/[^/]+/, `//127.0.0.1:${model.port}`);
          if (name === "PROXY_RESOLVE") return value.replace(`:${port}:`, `:${model.port}:`);
          return value;
        };
        const serviceEnv = { ENTRYWAY_CONNECT_GATEWAY_SERVICE_HOST: "127.0.0.1" };

        const refused = await runTestPod(pod, { serviceEnv, rewrite: rewrite() });
        expect(refused.stderr).toBe("");
        expect(refused.status).toBe(0);
        expect(refused.stdout).toMatch(/^refused: CONNECT undeclared\.invalid:22 through \S+ answered 404\n$/);

        const tunnelled = await runTestPod(pod, { serviceEnv, rewrite: rewrite(declared) });
        expect(tunnelled.status).toBe(1);
        expect(tunnelled.stderr).toMatch(
          new RegExp(`^OPEN PROXY: CONNECT ${declared.replace(/\./g, "\\.")} through \\S+ was tunnelled \\(200\\)\\n$`),
        );

        expect(model.log.map((d) => [d.method, d.authority, d.status])).toEqual([
          ["CONNECT", "undeclared.invalid:22", 404],
          ["CONNECT", declared, 200],
        ]);
      } finally {
        await model.close();
        sshLike.close();
      }
    },
  );
});
