import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { helmBinaries, helmLint, helmNotes, helmTemplate, repoRoot } from "../harness/helm";
import { assertValidObjects, type ObjectLike } from "../harness/validate";
import { ExecGateway } from "../../components/exec-gateway";
import { render } from "../harness/pulumi";
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
  writeFileSync(file, stringify({ execGateway: { enabled: true, ...execGateway }, ...(connect ? { connectGateway: { enabled: true, hostname: "ssh.example.com" } } : {}) }));
  return file;
}

const find = (objects: ObjectLike[], kind: string, namespace?: string) =>
  objects.filter((o) => o.kind === kind && (namespace === undefined || o.metadata?.namespace === namespace)) as Obj[];

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))("exec gateway chart section, %s", (_label, helm) => {
  it("makes nothing when disabled (the default)", () => {
    const objects = helmTemplate(helm, chart, {});
    expect(objects.filter((o) => JSON.stringify(o.metadata?.labels ?? {}).includes("exec-gateway"))).toEqual([]);
  });

  it("kubernetes scenario: a Role per target namespace, review ClusterRole, Istio exposure with TLS", async () => {
    const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-kubernetes.yaml")] });
    await assertValidObjects(objects);
    expect(find(objects, "Role").map((r) => r.metadata.namespace).sort()).toEqual(["team-a", "team-b"]);
    expect(find(objects, "ClusterRole").map((r) => r.metadata.name)).toEqual(["entryway-entryway-exec-gateway-review"]);
    const env = find(objects, "Deployment")[0].spec.template.spec.containers[0].env;
    expect(env).toEqual(expect.arrayContaining([{ name: "ENTRYWAY_IDLE_TIMEOUT_MS", value: "1800000" }, { name: "ENTRYWAY_REAUTHORIZE_INTERVAL_MS", value: "120000" }]));
    expect(find(objects, "Gateway")[0].spec.servers[0].tls).toMatchObject({ mode: "SIMPLE", credentialName: "exec-gateway-tls" });
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
    expect(find(objects, "Ingress")[0].spec.tls).toEqual([{ hosts: ["exec.example.com"], secretName: "exec-gateway-tls" }]);
  });

  it("oidc scenario: exec in every namespace only through the explicit ClusterRole, ingress only from allowFrom", () => {
    const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-oidc.yaml")] });
    expect(find(objects, "Role")).toEqual([]);
    expect(find(objects, "ClusterRole").map((r) => r.metadata.name)).toEqual(["entryway-entryway-exec-gateway-exec"]);
    expect(find(objects, "NetworkPolicy")[0].spec.ingress[0].from).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "console" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "console" } } },
    ]);
    const env = find(objects, "Deployment")[0].spec.template.spec.containers[0].env;
    expect(env).toEqual(expect.arrayContaining([{ name: "ENTRYWAY_AUTHORIZER", value: "oidc" }, { name: "ENTRYWAY_OIDC_ISSUER", value: "https://id.example.com" }]));
  });

  it("recordings-s3 scenario: three replicas rolled as usual, no volume, the bucket in env, credentials from the Secret, the endpoint's port open; replicas > 1 refused only for a ReadWriteOnce volume", async () => {
    const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-recordings-s3.yaml")] });
    await assertValidObjects(objects);
    expect(find(objects, "PersistentVolumeClaim")).toEqual([]);
    const deployment = find(objects, "Deployment")[0];
    expect(deployment.spec).toMatchObject({ replicas: 3, strategy: { type: "RollingUpdate" } });
    const env = deployment.spec.template.spec.containers[0].env as Obj[];
    expect(env.filter((e) => /RECORD|AWS_/.test(e.name)).map((e) => [e.name, e.value ?? e.valueFrom.secretKeyRef.name])).toEqual([
      ["ENTRYWAY_RECORD_S3_BUCKET", "exec-recordings"],
      ["ENTRYWAY_RECORD_S3_ENDPOINT", "https://objects.storage.svc.cluster.local:8333"],
      ["ENTRYWAY_RECORD_S3_REGION", "eu-west-1"],
      ["ENTRYWAY_RECORD_S3_PREFIX", "gateway/"],
      ["ENTRYWAY_RECORD_S3_FORCE_PATH_STYLE", "true"],
      ["AWS_ACCESS_KEY_ID", "exec-recordings-s3"],
      ["AWS_SECRET_ACCESS_KEY", "exec-recordings-s3"],
    ]);
    expect(find(objects, "NetworkPolicy")[0].spec.egress.at(-1).ports).toContainEqual({ port: 8333, protocol: "TCP" });
    expect(find(objects, "VirtualService")[0].spec.http[0].match).toContainEqual({ uri: { prefix: "/v1/recordings" } });
    // The same values with a volume instead of the bucket are refused: one node mounts it.
    const volume = valuesFile({ targetNamespaces: ["a"], replicas: 3, recordings: { enabled: true } });
    expect(() => helmTemplate(helm, chart, { valuesFiles: [volume] })).toThrow(/ReadWriteOnce volume need replicas: 1/);
    const autoscaled = valuesFile({ targetNamespaces: ["a"], autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 5 }, recordings: { enabled: true, s3: { bucket: "b-1" } } });
    expect(find(helmTemplate(helm, chart, { valuesFiles: [autoscaled] }), "HorizontalPodAutoscaler")[0].spec).toMatchObject({ minReplicas: 2, maxReplicas: 5 });
  });

  it("debug scenario: patch on pods/ephemeralcontainers in the Role and the ClusterRole, and the allow-list in env; none without it", async () => {
    const objects = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-debug.yaml")] });
    await assertValidObjects(objects);
    for (const role of [...find(objects, "Role"), ...find(objects, "ClusterRole").filter((r) => r.metadata.name.endsWith("-exec"))]) {
      expect(role.rules).toContainEqual({ apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] });
    }
    const env = find(objects, "Deployment")[0].spec.template.spec.containers[0].env;
    expect(env).toEqual(
      expect.arrayContaining([
        { name: "ENTRYWAY_DEBUG_IMAGES", value: '["registry.example.com/debug/busybox:1.36","registry.example.com/debug/netshoot:v0.13"]' },
        { name: "ENTRYWAY_DEBUG_DEFAULT_IMAGE", value: "registry.example.com/debug/busybox:1.36" },
      ]),
    );
    const plain = helmTemplate(helm, chart, { valuesFiles: [scenario("exec-gateway-oidc.yaml")] });
    expect(JSON.stringify(plain)).not.toMatch(/ephemeralcontainers|ENTRYWAY_DEBUG/);
  });

  it("trusts the one proxy exposure routes through for the client address (trustedProxyHops 1), unless told otherwise", () => {
    const hops = (values: Record<string, unknown>) =>
      (find(helmTemplate(helm, chart, { valuesFiles: [valuesFile({ targetNamespaces: ["a"], ...values })] }), "Deployment")[0].spec.template.spec.containers[0].env as Obj[]).find(
        (e) => e.name === "ENTRYWAY_TRUSTED_PROXY_HOPS",
      )?.value;
    const exposure = { kind: "istio", host: "exec.example.com", tlsSecretName: "t" };
    expect(hops({ exposure })).toBe("1");
    expect(hops({ exposure: { ...exposure, kind: "ingress" } })).toBe("1");
    expect(hops({})).toBeUndefined();
    expect(hops({ exposure, settings: { trustedProxies: ["10.0.0.0/8"] } })).toBeUndefined();
    expect(hops({ exposure, settings: { trustedProxyHops: 2 } })).toBe("2");
    expect(hops({ exposure, settings: { trustedProxyHops: 0 } })).toBe("0");
  });

  it("has the gateway refuse the CONNECT gateway's namespace at request time too (also with clusterWide), unless allowOwnedNamespaces", () => {
    const refused = (values: Record<string, unknown>) =>
      (find(helmTemplate(helm, chart, { valuesFiles: [valuesFile(values)] }), "Deployment").find((d) => d.metadata.name === "entryway-exec-gateway")!.spec.template.spec.containers[0].env as Obj[]).find(
        (e) => e.name === "ENTRYWAY_REFUSED_NAMESPACES",
      )?.value;
    expect(refused({ clusterWide: true, connect: true })).toBe('["entryway-connect"]');
    expect(refused({ targetNamespaces: ["entryway-connect"], allowOwnedNamespaces: true, connect: true })).toBeUndefined();
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
    const { manifests } = await render(() => new ExecGateway("entryway", { namespace, clusterWide: true, authorizer: "oidc", oidc: { issuer: "https://id.example.com", audience: "x" } }));
    const names = (list: ObjectLike[]) => list.filter((o) => o.kind === "ClusterRole").map((o) => o.metadata?.name);
    expect(names(objects)).toEqual(names(manifests as ObjectLike[]));
    expect(names(objects)[0]).toMatch(/^entryway-a-namespace-with-a-rather-long-name-for-the-a-[0-9a-f]{8}$/);
  });

  it("a webhook URL given in values goes into a Secret, referenced by secretKeyRef", () => {
    const objects = helmTemplate(helm, chart, {
      valuesFiles: [valuesFile({ authorizer: "webhook", webhook: { url: "https://console.example/auth" }, targetNamespaces: ["a"] })],
    });
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
    [{ targetNamespaces: ["a"], authorizer: "webhook", webhook: { url: "https://x.example", urlSecret: { name: "s", key: "k" } } }, /webhook/, true],
    [{ targetNamespaces: ["a"], authorizer: "oidc" }, /oidc/, true],
    [{ targetNamespaces: ["a"], exposure: { kind: "ingress", host: "exec.example.com" } }, /tlsSecretName/, true],
    [{ targetNamespaces: ["a"], runAsUser: 0 }, /runAsUser/, true],
    [{ targetNamespaces: ["Bad_NS"] }, /targetNamespaces/, true],
    [{ targetNamespaces: ["team-a", "entryway"] }, /execGateway.targetNamespaces includes "entryway", the gateway's own namespace/, false],
    [{ targetNamespaces: ["a"], authorizer: "ldap" }, /authorizer/, true],
    [{ targetNamespaces: ["a"], replica: 2 }, /replica/, true],
    [{ targetNamespaces: ["a"], autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 2 } }, /execGateway.autoscaling needs 1 <= minReplicas <= maxReplicas/, false],
    [{ targetNamespaces: ["a"], recordings: { enabled: true } }, /execGateway.recordings on a ReadWriteOnce volume need replicas: 1/, false],
    [{ targetNamespaces: ["a"], replicas: 1, recordings: { enabled: true, accessMode: "ReadWriteSometimes" } }, /accessMode/, true],
    [{ targetNamespaces: ["a"], replicas: 1, recordings: { enabled: true, retentionDays: -1 } }, /retentionDays/, true],
    [{ targetNamespaces: ["a"], recordings: { enabled: true, s3: { bucket: "Bad_Bucket" } } }, /bucket/, true],
    [{ targetNamespaces: ["a"], recordings: { enabled: true, s3: { bucket: "b-1", endpoint: "http://objects.example.com" } } }, /endpoint/, true],
    [{ targetNamespaces: ["a"], recordings: { enabled: true, s3: { bucket: "b-1", prefix: "/abs" } } }, /prefix/, true],
    [{ targetNamespaces: ["a"], debugContainers: { images: ["busybox:1.36"], defaultImage: "alpine" } }, /execGateway.debugContainers.defaultImage "alpine" is not one of/, false],
    [{ targetNamespaces: ["a"], debugContainers: { defaultImage: "alpine" } }, /defaultImage is set but execGateway.debugContainers.images is empty/, false],
    [{ targetNamespaces: ["a"], debugContainers: { images: ["busybox:1.36"] }, settings: { maxSessionSeconds: 0 } }, /maxSessionSeconds > 0/, false],
    [{ targetNamespaces: ["a"], authorizer: "oidc", oidc: { issuer: "https://id.example.com", audience: "x" }, debugContainers: { images: ["busybox:1.36"] } }, /need execGateway.authorizer "kubernetes"/, false],
    [{ targetNamespaces: ["a"], debugContainers: { images: ["busy box"] } }, /images/, true],
    [{ targetNamespaces: ["a"], settings: { trustedProxyHops: -1 } }, /trustedProxyHops/, true],
    [{ targetNamespaces: ["a"], authorizer: "oidc", oidc: { issuer: "http://id.example.com", audience: "x" } }, /issuer/, true],
    [{ targetNamespaces: ["team-a", "entryway-connect"], connect: true }, /execGateway.targetNamespaces includes "entryway-connect", a namespace the release owns \(the CONNECT gateway's/, false],
    [{ targetNamespaces: ["a"], authorizer: "oidc", oidc: { issuer: "https://id.example.com", audience: "x", jwksUri: "http://keys.example.com/jwks" } }, /jwksUri/, true],
  ])("fails with a clear message on bad values (%j)", (values, message, lintFails) => {
    const file = valuesFile(values);
    expect(() => helmTemplate(helm, chart, { valuesFiles: [file] })).toThrow(message);
    if (lintFails) {
      const lint = helmLint(helm, chart, [file]);
      expect(lint.ok).toBe(false);
      expect(lint.output).toMatch(message);
    }
  });
});
