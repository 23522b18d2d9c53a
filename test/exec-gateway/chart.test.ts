import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { helmBinaries, helmLint, helmNotes, helmTemplate, repoRoot } from "../../testkit/harness/helm";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { namespacePeer } from "../foundation/network-peers";
import { ExecGateway } from "../../components/exec-gateway";
import { render } from "../../testkit/harness/pulumi";
import { gatewaySettings } from "./settings-document";
import { loadConfig } from "../../gateway/src/config";
import { WEBHOOK_URL_ENV } from "./expected";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const chart = path.join(repoRoot, "charts/entryway");
const scenario = (name: string) => path.join(chart, "ci", name);
const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-exec-chart-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let counter = 0;
/** A values file with execGateway enabled as given; `connect: true` enables the CONNECT gateway too. */
function valuesFile({ connect, ...execGateway }: Record<string, unknown>): string {
  const file = path.join(scratch, `values-${counter++}.yaml`);
  writeFileSync(
    file,
    stringify({
      execGateway: { enabled: true, ...execGateway },
      ...(connect ? { connectGateway: { enabled: true, hostname: "ssh.example.com" } } : {}),
    }),
  );
  return file;
}

const find = (objects: ObjectLike[], kind: string, namespace?: string) =>
  objects.filter((o) => o.kind === kind && (namespace === undefined || o.metadata?.namespace === namespace)) as Obj[];

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))(
  "exec gateway chart section, %s",
  (_label, helm) => {
    it("makes nothing when disabled (the default)", () => {
      const objects = helmTemplate(helm, chart, {});
      expect(objects.filter((o) => JSON.stringify(o.metadata?.labels ?? {}).includes("exec-gateway"))).toEqual([]);
    });

    it("kubernetes scenario: a Role per target namespace, review ClusterRole, Istio exposure with TLS", async () => {
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-kubernetes.yaml")] });
      await assertValidObjects(objects);
      expect(
        find(objects, "Role")
          .map((r) => r.metadata.namespace)
          .sort(),
      ).toEqual(["team-a", "team-b"]);
      expect(find(objects, "ClusterRole").map((r) => r.metadata.name)).toEqual([
        "entryway-entryway-exec-gateway-review",
      ]);
      expect(gatewaySettings(objects)).toMatchObject({ idleTimeoutMs: 1800000, reauthorizeIntervalMs: 120000 });
      expect(find(objects, "Gateway")[0].spec.servers[0].tls).toMatchObject({
        mode: "SIMPLE",
        credentialName: "exec-gateway-tls",
      });
      // No timeout: istiod's default is none, and Istio's validation refuses `timeout: 0s` (test/ssh/istiod.test.ts).
      expect(find(objects, "VirtualService")[0].spec.http[0]).not.toHaveProperty("timeout");
    });

    it("webhook scenario: URL from the existing Secret, no review rights, HPA instead of replicas", () => {
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-webhook.yaml")] });
      expect(find(objects, "ClusterRole")).toEqual([]);
      expect(find(objects, "Secret")).toEqual([]);
      const deployment = find(objects, "Deployment")[0];
      expect(deployment.spec.replicas).toBeUndefined();
      expect(deployment.spec.template.spec.containers[0].env).toContainEqual({
        name: "ENTRYWAY_WEBHOOK_URL",
        valueFrom: { secretKeyRef: { name: "console-webhook", key: "url" } },
      });
      expect(find(objects, "HorizontalPodAutoscaler")[0].spec).toMatchObject({ minReplicas: 2, maxReplicas: 4 });
      expect(find(objects, "Ingress")[0].spec.tls).toEqual([
        { hosts: ["exec.example.com"], secretName: "exec-gateway-tls" },
      ]);
    });

    it("oidc scenario: exec in every namespace only through the explicit ClusterRole, ingress only from allowFrom", () => {
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-oidc.yaml")] });
      expect(find(objects, "Role")).toEqual([]);
      expect(find(objects, "ClusterRole").map((r) => r.metadata.name)).toEqual(["entryway-entryway-exec-gateway-exec"]);
      expect(find(objects, "NetworkPolicy")[0].spec.ingress[0].from).toEqual([
        namespacePeer("console", { "app.kubernetes.io/name": "console" }),
      ]);
      expect(gatewaySettings(objects)).toMatchObject({ authorizer: "oidc", oidcIssuer: "https://id.example.com" });
    });

    it("recordings-s3 scenario: three replicas rolled as usual, no volume, the bucket in the settings, credentials from the Secret, the endpoint's port open; replicas > 1 refused only for a ReadWriteOnce volume", async () => {
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-recordings-s3.yaml")] });
      await assertValidObjects(objects);
      expect(find(objects, "PersistentVolumeClaim")).toEqual([]);
      const deployment = find(objects, "Deployment")[0];
      expect(deployment.spec).toMatchObject({ replicas: 3, strategy: { type: "RollingUpdate" } });
      const env = deployment.spec.template.spec.containers[0].env as Obj[];
      expect(env.filter((e) => /AWS_/.test(e.name)).map((e) => [e.name, e.valueFrom.secretKeyRef.name])).toEqual([
        ["AWS_ACCESS_KEY_ID", "exec-recordings-s3"],
        ["AWS_SECRET_ACCESS_KEY", "exec-recordings-s3"],
      ]);
      const settings = gatewaySettings(objects);
      expect(Object.fromEntries(Object.entries(settings).filter(([key]) => key.startsWith("record")))).toEqual({
        recordS3Bucket: "exec-recordings",
        recordS3Endpoint: "https://objects.storage.svc.cluster.local:8333",
        recordS3Region: "eu-west-1",
        recordS3Prefix: "gateway/",
        recordS3ForcePathStyle: true,
      });
      expect(find(objects, "NetworkPolicy")[0].spec.egress.at(-1).ports).toContainEqual({
        port: 8333,
        protocol: "TCP",
      });
      expect(find(objects, "VirtualService")[0].spec.http[0].match).toContainEqual({
        uri: { prefix: "/v1/recordings" },
      });
      // The same values with a volume instead of the bucket are refused: one node mounts it.
      const volume = valuesFile({ targetNamespaces: ["a"], replicas: 3, recordings: { enabled: true } });
      expect(() => helmTemplate(helm, chart, { valuesFiles: [volume] })).toThrow(
        /ReadWriteOnce volume need replicas: 1/,
      );
      const autoscaled = valuesFile({
        targetNamespaces: ["a"],
        autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 5 },
        recordings: { enabled: true, s3: { bucket: "b-1" } },
      });
      expect(
        find(helmTemplate(helm, chart, { valuesFiles: [autoscaled] }), "HorizontalPodAutoscaler")[0].spec,
      ).toMatchObject({ minReplicas: 2, maxReplicas: 5 });
    });

    it("debug scenario: patch on pods/ephemeralcontainers in the Role and the ClusterRole, and the allow-list in the settings; none without it", async () => {
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-debug.yaml")] });
      await assertValidObjects(objects);
      for (const role of [
        ...find(objects, "Role"),
        ...find(objects, "ClusterRole").filter((r) => r.metadata.name.endsWith("-exec")),
      ]) {
        expect(role.rules).toContainEqual({
          apiGroups: [""],
          resources: ["pods/ephemeralcontainers"],
          verbs: ["patch"],
        });
      }
      expect(gatewaySettings(objects)).toMatchObject({
        debugImages: ["registry.example.com/debug/busybox:1.36", "registry.example.com/debug/netshoot:v0.13"],
        debugDefaultImage: "registry.example.com/debug/busybox:1.36",
      });
      const plain = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-oidc.yaml")] });
      expect(JSON.stringify(plain)).not.toMatch(/ephemeralcontainers|debugImages|debugDefaultImage/);
    });

    it("trusts the one proxy exposure routes through for the client address (trustedProxyHops 1), unless told otherwise", () => {
      const hops = (values: Record<string, unknown>) =>
        gatewaySettings(
          helmTemplate(helm, chart, { valuesFiles: [valuesFile({ targetNamespaces: ["a"], ...values })] }),
        ).trustedProxyHops;
      const exposure = { kind: "istio", host: "exec.example.com", tlsSecretName: "t" };
      expect(hops({ exposure })).toBe(1);
      expect(hops({ exposure: { ...exposure, kind: "ingress" } })).toBe(1);
      expect(hops({})).toBeUndefined();
      expect(hops({ exposure, settings: { trustedProxies: ["10.0.0.0/8"] } })).toBeUndefined();
      expect(hops({ exposure, settings: { trustedProxyHops: 2 } })).toBe(2);
      expect(hops({ exposure, settings: { trustedProxyHops: 0 } })).toBe(0);
    });

    it("has the gateway refuse the CONNECT gateway's namespace at request time too (also with clusterWide), unless allowOwnedNamespaces", () => {
      const refused = (values: Record<string, unknown>) =>
        gatewaySettings(helmTemplate(helm, chart, { valuesFiles: [valuesFile(values)] })).refusedNamespaces;
      expect(refused({ clusterWide: true, connect: true })).toEqual(["entryway-connect"]);
      expect(
        refused({ targetNamespaces: ["entryway-connect"], allowOwnedNamespaces: true, connect: true }),
      ).toBeUndefined();
      expect(refused({ targetNamespaces: ["a"] })).toBeUndefined();
    });

    it("install NOTES give the gateway's URLs and the namespaces it may enter", () => {
      const notes = (name: string) => helmNotes(helm, chart, scenario(name));
      const kube = notes("exec-gateway-kubernetes.yaml");
      expect(kube).toContain("URL: wss://exec.example.com/v1/enter");
      expect(kube).toContain("In-cluster: ws://entryway-exec-gateway.entryway.svc.cluster.local/v1/enter");
      expect(kube).toContain("It may enter: team-a, team-b");
      expect(notes("exec-gateway-oidc.yaml")).toContain("It may enter every namespace (clusterWide: true).");
      expect(notes("default.yaml")).not.toContain("Exec gateway");
    });

    it("names cluster-scoped objects as the component does, also past 63 characters (hashed)", async () => {
      const namespace = "a-namespace-with-a-rather-long-name-for-the-access-stack";
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-oidc.yaml")], namespace });
      const { manifests } = await render(
        () =>
          new ExecGateway("entryway", {
            namespace,
            clusterWide: true,
            authorizer: "oidc",
            oidc: { issuer: "https://id.example.com", audience: "x" },
          }),
      );
      const names = (list: ObjectLike[]) => list.filter((o) => o.kind === "ClusterRole").map((o) => o.metadata?.name);
      expect(names(objects)).toEqual(names(manifests as ObjectLike[]));
      expect(names(objects)[0]).toMatch(/^entryway-a-namespace-with-a-rather-long-name-for-the-a-[0-9a-f]{8}$/);
    });

    it("a webhook URL given in values goes into a Secret, referenced by secretKeyRef, never into a ConfigMap", async () => {
      const url = "https://console.example/auth?key=hunter2";
      const objects = helmTemplate(helm, chart, {
        valuesFiles: [
          valuesFile({
            authorizer: "webhook",
            webhook: { url, timeoutMs: 5000 },
            targetNamespaces: ["a"],
            recordings: { enabled: true, s3: { bucket: "b-1", credentialsSecret: "s3-creds" } },
          }),
        ],
      });
      // The settings document has the webhook's timeout but not its URL; no ConfigMap has the credential.
      expect(gatewaySettings(objects)).toMatchObject({ authorizer: "webhook", webhookTimeoutMs: 5000 });
      expect(gatewaySettings(objects)).not.toHaveProperty("webhookUrl");
      const configMaps = find(objects, "ConfigMap");
      expect(configMaps.map((c) => c.metadata.name)).toEqual(["entryway-exec-gateway"]);
      for (const configMap of configMaps) expect(JSON.stringify(configMap)).not.toMatch(/hunter2|console\.example/);
      // The same args through the component: the same absence (and the same document, test/parity).
      const { manifests } = await render(
        () =>
          new ExecGateway("entryway", {
            namespace: "entryway",
            targetNamespaces: ["a"],
            authorizer: "webhook",
            webhook: { url, timeoutMs: 5000 },
          }),
      );
      expect(manifests.filter((m) => m.kind === "ConfigMap")).toHaveLength(1);
      for (const configMap of manifests.filter((m) => m.kind === "ConfigMap"))
        expect(JSON.stringify(configMap)).not.toMatch(/hunter2|console\.example/);
      expect(
        find(objects, "Deployment")[0]
          .spec.template.spec.containers[0].env.filter((e: Obj) => e.name.startsWith("AWS_"))
          .map((e: Obj) => e.valueFrom.secretKeyRef),
      ).toEqual([
        { name: "s3-creds", key: "AWS_ACCESS_KEY_ID" },
        { name: "s3-creds", key: "AWS_SECRET_ACCESS_KEY" },
      ]);
      const secret = find(objects, "Secret")[0];
      expect(secret.metadata.name).toBe("entryway-exec-gateway-auth");
      const container = find(objects, "Deployment")[0].spec.template.spec.containers[0];
      expect(container.env.find((e: Obj) => e.name === "ENTRYWAY_WEBHOOK_URL")).toEqual(WEBHOOK_URL_ENV);
    });

    // Schema rules fail both lint and template; the cross-field rule the schema cannot express
    // (min <= max) fails template through the chart's `fail` (helm lint logs `fail` without failing).
    it.each([
      [{ targetNamespaces: [] }, /targetNamespaces/, true],
      [{ targetNamespaces: ["a", "a"] }, /targetNamespaces/, true],
      [{ targetNamespaces: ["a"], authorizer: "webhook" }, /webhook/, true],
      [
        {
          targetNamespaces: ["a"],
          authorizer: "webhook",
          webhook: { url: "https://x.example", urlSecret: { name: "s", key: "k" } },
        },
        /webhook/,
        true,
      ],
      [{ targetNamespaces: ["a"], authorizer: "oidc" }, /oidc/, true],
      [{ targetNamespaces: ["a"], exposure: { kind: "ingress", host: "exec.example.com" } }, /tlsSecretName/, true],
      [{ targetNamespaces: ["a"], runAsUser: 0 }, /runAsUser/, true],
      [{ targetNamespaces: ["Bad_NS"] }, /targetNamespaces/, true],
      [
        { targetNamespaces: ["team-a", "entryway"] },
        /execGateway.targetNamespaces includes "entryway", the gateway's own namespace/,
        false,
      ],
      [{ targetNamespaces: ["a"], authorizer: "ldap" }, /authorizer/, true],
      [{ targetNamespaces: ["a"], replica: 2 }, /replica/, true],
      [
        { targetNamespaces: ["a"], autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 2 } },
        /execGateway.autoscaling needs 1 <= minReplicas <= maxReplicas/,
        false,
      ],
      [
        { targetNamespaces: ["a"], recordings: { enabled: true } },
        /execGateway.recordings on a ReadWriteOnce volume need replicas: 1/,
        false,
      ],
      [
        { targetNamespaces: ["a"], replicas: 1, recordings: { enabled: true, accessMode: "ReadWriteSometimes" } },
        /accessMode/,
        true,
      ],
      [
        { targetNamespaces: ["a"], replicas: 1, recordings: { enabled: true, retentionDays: -1 } },
        /retentionDays/,
        true,
      ],
      [{ targetNamespaces: ["a"], recordings: { enabled: true, s3: { bucket: "Bad_Bucket" } } }, /bucket/, true],
      [
        {
          targetNamespaces: ["a"],
          recordings: { enabled: true, s3: { bucket: "b-1", endpoint: "http://objects.example.com" } },
        },
        /endpoint/,
        true,
      ],
      [
        { targetNamespaces: ["a"], recordings: { enabled: true, s3: { bucket: "b-1", prefix: "/abs" } } },
        /prefix/,
        true,
      ],
      [
        { targetNamespaces: ["a"], debugContainers: { images: ["busybox:1.36"], defaultImage: "alpine" } },
        /execGateway.debugContainers.defaultImage "alpine" is not one of/,
        false,
      ],
      [
        { targetNamespaces: ["a"], debugContainers: { defaultImage: "alpine" } },
        /defaultImage is set but execGateway.debugContainers.images is empty/,
        false,
      ],
      [
        { targetNamespaces: ["a"], debugContainers: { images: ["busybox:1.36"] }, settings: { maxSessionSeconds: 0 } },
        /maxSessionSeconds > 0/,
        false,
      ],
      [
        {
          targetNamespaces: ["a"],
          authorizer: "oidc",
          oidc: { issuer: "https://id.example.com", audience: "x" },
          debugContainers: { images: ["busybox:1.36"] },
        },
        /need execGateway.authorizer "kubernetes"/,
        false,
      ],
      [{ targetNamespaces: ["a"], debugContainers: { images: ["busy box"] } }, /images/, true],
      [{ targetNamespaces: ["a"], settings: { trustedProxyHops: -1 } }, /trustedProxyHops/, true],
      // values.schema.json refuses what the gateway would refuse at start (and crash-loop on).
      [{ targetNamespaces: ["a"], settings: { idleTimout: 600000 } }, /additional properties 'idleTimout'/, true],
      [{ targetNamespaces: ["a"], settings: { maxSessions: "10" } }, /settings\/maxSessions.*want integer/, true],
      [
        { targetNamespaces: ["a"], settings: { reapGraceSeconds: 20 } },
        /execGateway.settings.reapTimeoutMs \(15000\) must be longer than execGateway.settings.reapGraceSeconds \(20\) x 1000/,
        false,
      ],
      [
        { targetNamespaces: ["a"], settings: { bufferLowBytes: 2000000 } },
        /execGateway.settings.bufferLowBytes \(2000000\) must not exceed execGateway.settings.bufferHighBytes \(1048576\)/,
        false,
      ],
      [
        { targetNamespaces: ["a"], authorizer: "oidc", oidc: { issuer: "http://id.example.com", audience: "x" } },
        /issuer/,
        true,
      ],
      [
        { targetNamespaces: ["team-a", "entryway-connect"], connect: true },
        /execGateway.targetNamespaces includes "entryway-connect", a namespace the release owns \(the CONNECT gateway's/,
        false,
      ],
      [
        {
          targetNamespaces: ["a"],
          authorizer: "oidc",
          oidc: { issuer: "https://id.example.com", audience: "x", jwksUri: "http://keys.example.com/jwks" },
        },
        /jwksUri/,
        true,
      ],
    ])("fails with a clear message on bad values (%j)", (values, message, lintFails) => {
      const file = valuesFile(values);
      expect(() => helmTemplate(helm, chart, { valuesFiles: [file] })).toThrow(message);
      if (lintFails) {
        const lint = helmLint(helm, chart, [file]);
        expect(lint.ok).toBe(false);
        expect(lint.output).toMatch(message);
      }
    });
  },
);

describe("the exec gateway's settings as one document", () => {
  const helm = helmBinaries()[0];
  const gatewayScenarios = readdirSync(path.join(chart, "ci")).filter((file) => file.startsWith("exec-gateway-"));

  it.each(gatewayScenarios)(
    "%s: the gateway takes the document, mounted read-only where ENTRYWAY_CONFIG points",
    (name) => {
      const objects = helmTemplate(helm, chart, { valuesFiles: [scenario(name)] });
      const pod = find(objects, "Deployment")[0].spec.template.spec;
      const container = pod.containers[0];
      const mount = container.volumeMounts.find((m: Obj) => m.name === "config");
      expect(mount).toEqual({ name: "config", mountPath: "/etc/entryway", readOnly: true });
      expect(pod.volumes).toContainEqual({ name: "config", configMap: { name: "entryway-exec-gateway" } });
      const configFile = container.env.find((e: Obj) => e.name === "ENTRYWAY_CONFIG").value;
      expect(configFile).toBe(`${mount.mountPath}/config.json`);
      // Only what is not a setting of the document reaches the pod as env: where it is (and the CA
      // bundle Node reads itself), the downward API, Secrets.
      for (const variable of container.env as Obj[])
        expect(
          ["ENTRYWAY_CONFIG", "NODE_EXTRA_CA_CERTS"].includes(variable.name) || variable.valueFrom !== undefined,
        ).toBe(true);
      const file = path.join(scratch, `${name}.config.json`);
      writeFileSync(file, JSON.stringify(gatewaySettings(objects)));
      expect(loadConfig({ ENTRYWAY_CONFIG: file })).toMatchObject(gatewaySettings(objects));
    },
  );

  it("is the same bytes and checksum from the component as from the chart, also with the characters Go escapes for HTML (& < >)", async () => {
    const values = { targetNamespaces: ["a"], settings: { reviewerGroups: ["r&d <ops>"], idleTimeoutMs: 600000 } };
    const objects = helmTemplate(helm, chart, { valuesFiles: [valuesFile(values)] });
    const { manifests } = await render(() => new ExecGateway("entryway", { namespace: "entryway", ...values }));
    const data = (list: ObjectLike[]) => (list.find((o) => o.kind === "ConfigMap") as Obj).data["config.json"];
    expect(data(objects)).toContain("r\\u0026d \\u003cops\\u003e");
    expect(data(manifests as ObjectLike[])).toBe(data(objects));
    const checksum = (list: ObjectLike[]) =>
      (list.find((o) => o.kind === "Deployment") as Obj).spec.template.metadata.annotations["checksum/config"];
    expect(checksum(objects)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(manifests as ObjectLike[])).toBe(checksum(objects));
  });

  it("rolls the Deployment when a setting changes (its pod template's checksum/config), and only then", () => {
    const checksum = (settings: Record<string, unknown>) =>
      find(
        helmTemplate(helm, chart, { valuesFiles: [valuesFile({ targetNamespaces: ["a"], settings })] }),
        "Deployment",
      )[0].spec.template.metadata.annotations["checksum/config"];
    expect(checksum({ idleTimeoutMs: 600000 })).toBe(checksum({ idleTimeoutMs: 600000 }));
    expect(checksum({ idleTimeoutMs: 600000 })).not.toBe(checksum({ idleTimeoutMs: 900000 }));
  });
});
