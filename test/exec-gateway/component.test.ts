import { createHash } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { ExecGateway, type ExecGatewayArgs, type ExecGatewayWebhookArgs } from "../../components/exec-gateway";
import { REDACTED } from "../../testkit/offline/manifests";
import { childrenOf, findManifest, outputOf, render, type Manifest } from "../../testkit/harness/pulumi";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { namespacePeer } from "../foundation/network-peers";
import { gatewaySettings } from "./settings-document";
import { WEBHOOK_URL_ENV } from "./expected";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function renderGateway(args: Partial<ExecGatewayArgs> = {}) {
  let gateway: ExecGateway | undefined;
  const rendered = await render(() => {
    gateway = new ExecGateway("entryway", { namespace: "entryway", targetNamespaces: ["team-a", "team-b"], ...args });
  });
  await assertValidObjects(rendered.manifests);
  return { ...rendered, gateway: gateway! };
}

/** The one ResourceError a gateway the args cannot make is refused with, one line per problem. */
async function refusalLines(args: Partial<ExecGatewayArgs>): Promise<string[]> {
  const error: unknown = await renderGateway(args).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(pulumi.ResourceError);
  return (error as Error).message.split("\n");
}

const kinds = (manifests: Manifest[]) =>
  manifests.map((m) => `${m.kind}/${m.metadata.namespace ?? ""}/${m.metadata.name}`).sort();

describe("ExecGateway", () => {
  it("makes a least-privilege gateway by default: a Role per target namespace, review rights for the kubernetes authorizer", async () => {
    const { manifests, resources, gateway } = await renderGateway();
    expect(kinds(manifests)).toEqual([
      "ClusterRole//entryway-entryway-exec-gateway-review",
      "ClusterRoleBinding//entryway-entryway-exec-gateway-review",
      "ConfigMap/entryway/entryway-exec-gateway",
      "Deployment/entryway/entryway-exec-gateway",
      "NetworkPolicy/entryway/entryway-exec-gateway",
      "PodDisruptionBudget/entryway/entryway-exec-gateway",
      "Role/team-a/entryway-exec-gateway",
      "Role/team-b/entryway-exec-gateway",
      "RoleBinding/team-a/entryway-exec-gateway",
      "RoleBinding/team-b/entryway-exec-gateway",
      "Service/entryway/entryway-exec-gateway",
      "ServiceAccount/entryway/entryway-exec-gateway",
    ]);
    // Every child hangs under the component.
    const component = resources.find((r) => r.type === "entryway:index:ExecGateway")!;
    expect(childrenOf(resources, component.urn)).toHaveLength(manifests.length);

    const role = manifests.find((m) => m.kind === "Role" && m.metadata.namespace === "team-a") as Obj;
    const verbs = role.rules.flatMap((r: Obj) => r.resources.map((res: string) => `${res}:${r.verbs.join(",")}`));
    expect(verbs.sort()).toEqual([
      "deployments:get",
      "pods/exec:get,create",
      "pods:get,list",
      "replicasets:list",
      "statefulsets:get",
    ]);
    expect(JSON.stringify(role.rules)).not.toContain("*");
    const binding = manifests.find((m) => m.kind === "RoleBinding" && m.metadata.namespace === "team-b") as Obj;
    expect(binding.subjects).toEqual([
      { kind: "ServiceAccount", name: "entryway-exec-gateway", namespace: "entryway" },
    ]);
    expect(binding.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "entryway-exec-gateway",
    });
    const review = findManifest(manifests, "ClusterRole", "entryway-entryway-exec-gateway-review") as Obj;
    expect(review.rules.map((r: Obj) => r.resources[0]).sort()).toEqual(["subjectaccessreviews", "tokenreviews"]);
    expect(review.rules.every((r: Obj) => r.verbs.join() === "create")).toBe(true);

    expect(await outputOf(gateway.url)).toBe("ws://entryway-exec-gateway.entryway.svc.cluster.local/v1/enter");
    expect(await outputOf(gateway.targetNamespaces)).toEqual(["team-a", "team-b"]);
  });

  it("runs non-root with restricted contexts, probes on the service's health paths, and the authorizer in its settings document", async () => {
    const { manifests } = await renderGateway();
    const deployment = findManifest(manifests, "Deployment", "entryway-exec-gateway") as Obj;
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const container = pod.containers[0];
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "metrics" });
    expect(container.ports).toEqual([
      { name: "http", containerPort: 8080, protocol: "TCP" },
      { name: "metrics", containerPort: 9090, protocol: "TCP" },
    ]);
    // One document of settings, mounted read-only; the gateway learns its own namespace from the
    // downward API, to refuse targets there.
    expect(container.env).toEqual([
      { name: "ENTRYWAY_CONFIG", value: "/etc/entryway/config.json" },
      { name: "ENTRYWAY_GATEWAY_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    ]);
    expect(container.volumeMounts).toContainEqual({ name: "config", mountPath: "/etc/entryway", readOnly: true });
    expect(pod.volumes).toContainEqual({ name: "config", configMap: { name: "entryway-exec-gateway" } });
    const settings = gatewaySettings(manifests as ObjectLike[]);
    expect(settings).toEqual({
      host: "0.0.0.0",
      port: 8080,
      metricsPort: 9090,
      backend: "kubernetes",
      authorizer: "kubernetes",
    });
    expect(settings.allowedOrigins).toBeUndefined(); // not exposed: the gateway's own origin only
    expect(pod.serviceAccountName).toBe("entryway-exec-gateway");
    expect(pod.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: "kubernetes.io/hostname",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: deployment.spec.selector.matchLabels },
      },
    ]);
    expect(deployment.spec.replicas).toBe(2);
    const service = findManifest(manifests, "Service", "entryway-exec-gateway") as Obj;
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(service.spec.type).toBe("ClusterIP");
    const policy = findManifest(manifests, "NetworkPolicy", "entryway-exec-gateway") as Obj;
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(policy.spec.ingress[0].from).toEqual([namespacePeer("istio-system")]);
    // Metrics and readiness: a port of their own, reachable only from the monitoring namespace.
    expect(policy.spec.ingress).toEqual([
      expect.objectContaining({ ports: [{ port: "http", protocol: "TCP" }] }),
      {
        from: [namespacePeer("monitoring")],
        ports: [{ port: "metrics", protocol: "TCP" }],
      },
    ]);
  });

  it("grants exec cluster-wide only when clusterWide is set", async () => {
    const { manifests } = await renderGateway({ targetNamespaces: [], clusterWide: true });
    expect(manifests.filter((m) => m.kind === "Role")).toEqual([]);
    const role = findManifest(manifests, "ClusterRole", "entryway-entryway-exec-gateway-exec") as Obj;
    expect(role.rules.find((r: Obj) => r.resources.includes("pods/exec")).verbs).toEqual(["get", "create"]);
  });

  it("grants patch on pods/ephemeralcontainers only with debug containers, and gives the gateway the allow-list", async () => {
    const images = ["registry.example.com/debug/busybox:1.36", "registry.example.com/debug/netshoot:v0.13"];
    const { manifests } = await renderGateway({
      clusterWide: true,
      debugContainers: { images, defaultImage: images[1] },
    });
    for (const role of [
      findManifest(manifests, "Role", "entryway-exec-gateway"),
      findManifest(manifests, "ClusterRole", "entryway-entryway-exec-gateway-exec"),
    ] as Obj[]) {
      expect(role.rules).toContainEqual({ apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] });
    }
    expect(gatewaySettings(manifests as ObjectLike[])).toMatchObject({
      debugImages: images,
      debugDefaultImage: images[1],
    });
    // Without them: no such rule anywhere, no such setting.
    const plain = await renderGateway({ clusterWide: true });
    expect(JSON.stringify(plain.manifests)).not.toMatch(/ephemeralcontainers|debugImages|debugDefaultImage/);
  });

  it("keeps the webhook URL in a Secret referenced by secretKeyRef, and drops review rights", async () => {
    const { manifests } = await renderGateway({
      authorizer: "webhook",
      webhook: { url: "https://console.example/auth?key=hunter2" },
    });
    expect(manifests.some((m) => m.kind === "ClusterRole")).toBe(false);
    const secret = findManifest(manifests, "Secret", "entryway-exec-gateway-auth") as Obj;
    expect(secret.stringData).toEqual({ "webhook-url": REDACTED });
    const container = (findManifest(manifests, "Deployment", "entryway-exec-gateway") as Obj).spec.template.spec
      .containers[0];
    expect(container.env.find((e: Obj) => e.name === "ENTRYWAY_WEBHOOK_URL")).toEqual(WEBHOOK_URL_ENV);
    expect(JSON.stringify(manifests)).not.toContain("hunter2");
    expect(JSON.stringify(manifests.filter((m) => m.kind === "ConfigMap"))).not.toContain("console.example");
  });

  it("takes a webhook that arrives as one secret object (as Pulumi's provider host passes a nested secret) and keeps its URL secret", async () => {
    const webhook = pulumi.secret({
      url: "https://console.example/auth?key=hunter2",
      timeoutMs: 5000,
    }) as unknown as ExecGatewayWebhookArgs;
    const { manifests } = await renderGateway({ authorizer: "webhook", webhook });
    expect((findManifest(manifests, "Secret", "entryway-exec-gateway-auth") as Obj).stringData).toEqual({
      "webhook-url": REDACTED,
    });
    const env = (findManifest(manifests, "Deployment", "entryway-exec-gateway") as Obj).spec.template.spec.containers[0]
      .env as Obj[];
    expect(env.find((e) => e.name === "ENTRYWAY_WEBHOOK_URL")?.valueFrom.secretKeyRef).toEqual({
      name: "entryway-exec-gateway-auth",
      key: "webhook-url",
    });
    // The timeout, no secret, comes out of the secret object into the settings document; the URL does not.
    expect(gatewaySettings(manifests as ObjectLike[])).toMatchObject({ authorizer: "webhook", webhookTimeoutMs: 5000 });
    expect(JSON.stringify(manifests)).not.toContain("hunter2");
    const noUrl = pulumi.secret({ urlSecret: { name: "console", key: "url" } }) as unknown as ExecGatewayWebhookArgs;
    await expect(renderGateway({ authorizer: "webhook", webhook: noUrl })).rejects.toThrow(
      /needs exactly one of webhook.url or webhook.urlSecret; from a secret object input, give url/,
    );
  });

  it("uses an existing Secret for the webhook URL when given one", async () => {
    const { manifests } = await renderGateway({
      authorizer: "webhook",
      webhook: { urlSecret: { name: "console", key: "url" } },
    });
    expect(manifests.some((m) => m.kind === "Secret")).toBe(false);
    const container = (findManifest(manifests, "Deployment", "entryway-exec-gateway") as Obj).spec.template.spec
      .containers[0];
    expect(container.env.find((e: Obj) => e.name === "ENTRYWAY_WEBHOOK_URL").valueFrom.secretKeyRef).toEqual({
      name: "console",
      key: "url",
    });
  });

  it("passes OIDC settings in the settings document", async () => {
    const { manifests } = await renderGateway({
      authorizer: "oidc",
      oidc: { issuer: "https://id.example", audience: "entryway", namespacesClaim: "ns" },
    });
    expect(gatewaySettings(manifests as ObjectLike[])).toMatchObject({
      authorizer: "oidc",
      oidcIssuer: "https://id.example",
      oidcAudience: "entryway",
      oidcNamespacesClaim: "ns",
    });
  });

  it("exposes the WebSocket through Istio with TLS and no route timeout", async () => {
    const { manifests, gateway } = await renderGateway({
      exposure: { kind: "istio", host: "exec.example.com", tlsSecretName: "exec-tls" },
    });
    const gw = findManifest(manifests, "Gateway", "entryway-exec-gateway") as Obj;
    expect(gw.spec.servers[0]).toMatchObject({
      port: { number: 443, protocol: "HTTPS" },
      tls: { mode: "SIMPLE", credentialName: "exec-tls" },
    });
    const vs = findManifest(manifests, "VirtualService", "entryway-exec-gateway") as Obj;
    expect(vs.spec.gateways).toEqual(["entryway-exec-gateway"]);
    // No timeout: istiod's default is none, and Istio's validation refuses `timeout: 0s` (test/ssh/istiod.test.ts).
    expect(vs.spec.http[0]).not.toHaveProperty("timeout");
    // Only the endpoint and the web terminal go out: not /metrics, /readyz or anything else.
    expect(vs.spec.http[0].match).toEqual([
      { uri: { exact: "/v1/enter" } },
      { uri: { exact: "/" } },
      { uri: { prefix: "/web/" } },
    ]);
    expect(vs.spec.http[0].route[0].destination).toEqual({
      host: "entryway-exec-gateway.entryway.svc.cluster.local",
      port: { number: 80 },
    });
    expect(await outputOf(gateway.url)).toBe("wss://exec.example.com/v1/enter");
  });

  it("exposes through an Ingress with TLS, and autoscales with an HPA instead of fixed replicas", async () => {
    const { manifests } = await renderGateway({
      exposure: { kind: "ingress", host: "exec.example.com", tlsSecretName: "exec-tls", ingressClassName: "nginx" },
      ingressNamespace: "ingress-nginx",
      autoscaling: { minReplicas: 2, maxReplicas: 5 },
    });
    const ingress = findManifest(manifests, "Ingress", "entryway-exec-gateway") as Obj;
    expect(ingress.spec.tls).toEqual([{ hosts: ["exec.example.com"], secretName: "exec-tls" }]);
    expect(ingress.spec.ingressClassName).toBe("nginx");
    expect(ingress.spec.rules[0].http.paths.map((p: Obj) => `${p.pathType} ${p.path}`)).toEqual([
      "Exact /v1/enter",
      "Exact /",
      "Prefix /web/",
    ]);
    const hpa = findManifest(manifests, "HorizontalPodAutoscaler", "entryway-exec-gateway") as Obj;
    expect(hpa.spec).toMatchObject({
      minReplicas: 2,
      maxReplicas: 5,
      scaleTargetRef: { kind: "Deployment", name: "entryway-exec-gateway" },
    });
    expect((findManifest(manifests, "Deployment", "entryway-exec-gateway") as Obj).spec.replicas).toBeUndefined();
  });

  it("records nothing by default; with recordings, mounts a volume at the record dir with retention, and recreates a single-node volume's pod", async () => {
    const plain = findManifest((await renderGateway()).manifests, "Deployment", "entryway-exec-gateway") as Obj;
    expect(JSON.stringify(plain)).not.toContain("record");
    expect(
      Object.keys(gatewaySettings((await renderGateway()).manifests as ObjectLike[])).filter((key) =>
        key.startsWith("record"),
      ),
    ).toEqual([]);
    expect(plain.spec.strategy.type).toBe("RollingUpdate");

    const { manifests } = await renderGateway({ replicas: 1, recordings: { size: "5Gi", retentionDays: 7 } });
    const claim = findManifest(manifests, "PersistentVolumeClaim", "entryway-exec-gateway-recordings") as Obj;
    expect(claim.spec).toEqual({ accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "5Gi" } } });
    const deployment = findManifest(manifests, "Deployment", "entryway-exec-gateway") as Obj;
    expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
    const pod = deployment.spec.template.spec;
    expect(pod.volumes).toContainEqual({
      name: "recordings",
      persistentVolumeClaim: { claimName: "entryway-exec-gateway-recordings" },
    });
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: "recordings",
      mountPath: "/var/lib/entryway/recordings",
    });
    expect(gatewaySettings(manifests as ObjectLike[])).toMatchObject({
      recordDir: "/var/lib/entryway/recordings",
      recordRetentionDays: 7,
    });

    // Exposed, the recordings endpoint is routed too (and only then).
    const exposed = await renderGateway({
      replicas: 1,
      recordings: {},
      settings: { reviewerGroups: ["auditors"] },
      exposure: { kind: "ingress", host: "exec.example.com", tlsSecretName: "t" },
    });
    const ingress = findManifest(exposed.manifests, "Ingress", "entryway-exec-gateway") as Obj;
    expect(ingress.spec.rules[0].http.paths.map((p: Obj) => `${p.pathType} ${p.path}`)).toEqual([
      "Exact /v1/enter",
      "Exact /",
      "Prefix /web/",
      "Prefix /v1/recordings",
      "Exact /replay",
    ]);
    expect(gatewaySettings(exposed.manifests as ObjectLike[]).reviewerGroups).toEqual(["auditors"]);

    // A shared (ReadWriteMany) volume serves any number of replicas, rolled as usual.
    const shared = await renderGateway({
      autoscaling: { minReplicas: 2, maxReplicas: 4 },
      recordings: { accessMode: "ReadWriteMany", storageClassName: "nfs" },
    });
    expect(
      (findManifest(shared.manifests, "PersistentVolumeClaim", "entryway-exec-gateway-recordings") as Obj).spec,
    ).toMatchObject({ accessModes: ["ReadWriteMany"], storageClassName: "nfs" });
    expect((findManifest(shared.manifests, "Deployment", "entryway-exec-gateway") as Obj).spec.strategy.type).toBe(
      "RollingUpdate",
    );
  });

  it("records to an S3 bucket with any number of replicas: no volume, the bucket in the settings, credentials from the Secret only, the endpoint's port opened", async () => {
    const s3 = {
      bucket: "exec-recordings",
      endpoint: "https://objects.example.com:9000",
      region: "eu-west-1",
      prefix: "gw/",
      forcePathStyle: true,
      credentialsSecret: "s3-creds",
    };
    const { manifests } = await renderGateway({
      autoscaling: { minReplicas: 2, maxReplicas: 6 },
      recordings: { s3 },
      serviceAccountAnnotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/x" },
    });
    expect(manifests.filter((m) => m.kind === "PersistentVolumeClaim")).toEqual([]);
    const deployment = findManifest(manifests, "Deployment", "entryway-exec-gateway") as Obj;
    expect(deployment.spec.strategy.type).toBe("RollingUpdate");
    const pod = deployment.spec.template.spec;
    expect(pod.volumes).toEqual([
      { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
      { name: "config", configMap: { name: "entryway-exec-gateway" } },
    ]);
    const env = pod.containers[0].env as Obj[];
    expect(env.filter((e) => /AWS_/.test(e.name))).toEqual([
      { name: "AWS_ACCESS_KEY_ID", valueFrom: { secretKeyRef: { name: "s3-creds", key: "AWS_ACCESS_KEY_ID" } } },
      {
        name: "AWS_SECRET_ACCESS_KEY",
        valueFrom: { secretKeyRef: { name: "s3-creds", key: "AWS_SECRET_ACCESS_KEY" } },
      },
    ]);
    const recordSettings = (list: Manifest[]) =>
      Object.fromEntries(
        Object.entries(gatewaySettings(list as ObjectLike[])).filter(([key]) => key.startsWith("record")),
      );
    expect(recordSettings(manifests)).toEqual({
      recordS3Bucket: "exec-recordings",
      recordS3Endpoint: "https://objects.example.com:9000",
      recordS3Region: "eu-west-1",
      recordS3Prefix: "gw/",
      recordS3ForcePathStyle: true,
    });
    const policy = findManifest(manifests, "NetworkPolicy", "entryway-exec-gateway") as Obj;
    expect(policy.spec.egress.at(-1).ports).toEqual([
      { port: 443, protocol: "TCP" },
      { port: 6443, protocol: "TCP" },
      { port: 9000, protocol: "TCP" },
    ]);
    expect((findManifest(manifests, "ServiceAccount", "entryway-exec-gateway") as Obj).metadata.annotations).toEqual({
      "eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/x",
    });

    // Without a Secret the pod's identity provides the credentials: no AWS_* variable at all; Amazon S3 on 443 opens no port.
    const identity = await renderGateway({ replicas: 3, recordings: { s3: { bucket: "exec-recordings" } } });
    const identityDeployment = findManifest(identity.manifests, "Deployment", "entryway-exec-gateway") as Obj;
    expect(identityDeployment.spec.replicas).toBe(3);
    expect(
      (identityDeployment.spec.template.spec.containers[0].env as Obj[]).filter((e) => /AWS_/.test(e.name)),
    ).toEqual([]);
    expect(recordSettings(identity.manifests)).toEqual({ recordS3Bucket: "exec-recordings" });
    expect(
      (findManifest(identity.manifests, "NetworkPolicy", "entryway-exec-gateway") as Obj).spec.egress.at(-1).ports,
    ).toHaveLength(2);
  });

  it.each([
    [{ recordings: { s3: { bucket: "Bad_Bucket" } } }, /recordings.s3.bucket "Bad_Bucket" is not a bucket name/],
    [
      { recordings: { s3: { bucket: "b-1", endpoint: "http://objects.example.com" } } },
      /is not https:\/\/host\[:port\]/,
    ],
    [{ recordings: { s3: { bucket: "b-1", prefix: "/abs" } } }, /recordings.s3.prefix "\/abs" is not a key prefix/],
    [
      { recordings: { s3: { bucket: "b-1" }, retentionDays: 7 } },
      /recordings.retentionDays are for the recordings volume/,
    ],
    [
      { recordings: { s3: { bucket: "b-1" }, size: "1Gi", accessMode: "ReadWriteOnce" as const } },
      /recordings.size, recordings.accessMode are for the recordings volume/,
    ],
  ])("rejects S3 recording args with a clear error (%j)", async (args, message) => {
    await expect(renderGateway(args as Partial<ExecGatewayArgs>)).rejects.toThrow(message);
  });

  it.each([
    [{ targetNamespaces: [] }, /targetNamespaces is empty/],
    [{ targetNamespaces: ["Bad_NS"] }, /"Bad_NS" is not a namespace name/],
    [{ targetNamespaces: ["team-a", "entryway"] }, /targetNamespaces includes "entryway", the gateway's own namespace/],
    [{ authorizer: "webhook" as const }, /needs exactly one of webhook.url or webhook.urlSecret/],
    [{ authorizer: "oidc" as const, oidc: { issuer: "", audience: "x" } }, /needs oidc.issuer and oidc.audience/],
    [{ runAsUser: 0 }, /non-root/],
    [{ autoscaling: { minReplicas: 3, maxReplicas: 2 } }, /minReplicas <= maxReplicas/],
    [{ exposure: { kind: "ingress" as const, host: "exec.example.com", tlsSecretName: "" } }, /TLS only/],
    [{ exposure: { kind: "istio" as const, host: "not a host", tlsSecretName: "t" } }, /not a host name/],
    [{ recordings: {} }, /recordings on a ReadWriteOnce volume need replicas: 1/],
    [
      { replicas: 1, autoscaling: { minReplicas: 1, maxReplicas: 2 }, recordings: {} },
      /recordings on a ReadWriteOnce volume need replicas: 1/,
    ],
    [{ replicas: 1, recordings: { retentionDays: -1 } }, /retentionDays must be an integer >= 0/],
    [{ debugContainers: { images: [] } }, /debugContainers.images is empty/],
    [
      { debugContainers: { images: ["busybox:1.36"], defaultImage: "alpine" } },
      /defaultImage "alpine" is not one of debugContainers.images/,
    ],
    [
      {
        debugContainers: { images: ["busybox:1.36"] },
        authorizer: "oidc" as const,
        oidc: { issuer: "https://id.example.com", audience: "x" },
      },
      /debugContainers need authorizer "kubernetes"/,
    ],
    [{ debugContainers: { images: ["busybox:1.36"] }, settings: { maxSessionSeconds: 0 } }, /maxSessionSeconds > 0/],
    [
      { authorizer: "oidc" as const, oidc: { issuer: "http://id.example.com", audience: "x" } },
      /oidc.issuer "http:\/\/id.example.com" must be https \(plain http only to a loopback address\)/,
    ],
    [
      {
        authorizer: "oidc" as const,
        oidc: { issuer: "https://id.example.com", audience: "x", jwksUri: "http://keys.example.com/jwks" },
      },
      /oidc.jwksUri "http:\/\/keys.example.com\/jwks" must be https/,
    ],
  ])("rejects bad args with a clear error (%j)", async (args, message) => {
    await expect(renderGateway(args as Partial<ExecGatewayArgs>)).rejects.toThrow(message);
  });

  it("reports every problem of the args at once, one line each, as a ResourceError of the component", async () => {
    expect(
      await refusalLines({
        targetNamespaces: ["Bad_NS", "*"],
        runAsUser: 0,
        exposure: { kind: "ingress", host: "exec.example.com", tlsSecretName: "" },
      }),
    ).toEqual([
      'ExecGateway entryway: targetNamespaces: "Bad_NS" is not a namespace name',
      "ExecGateway entryway: targetNamespaces: no wildcards; use clusterWide: true to enter every namespace",
      "ExecGateway entryway: runAsUser must be a non-root numeric user (>= 1)",
      "ExecGateway entryway: exposure.tlsSecretName is required: the gateway is exposed with TLS only",
    ]);
  });

  it("keeps every child's URN: the chart's objects under their logical names, parented by the component", async () => {
    const urns = async (args: Partial<ExecGatewayArgs>) => {
      const { resources } = await renderGateway(args);
      const component = resources.find((r) => r.type === "entryway:index:ExecGateway")!;
      return childrenOf(resources, component.urn)
        .map((r) => `${r.type}::${r.name}`)
        .sort();
    };
    const exposure = { host: "exec.example.com", tlsSecretName: "t" };
    expect(
      await urns({
        clusterWide: true,
        authorizer: "webhook",
        webhook: { url: "https://console.example/auth" },
        replicas: 1,
        recordings: {},
        exposure: { kind: "istio", ...exposure },
      }),
    ).toEqual([
      "kubernetes:apps/v1:Deployment::entryway-exec-gateway",
      "kubernetes:core/v1:ConfigMap::entryway-exec-gateway",
      "kubernetes:core/v1:PersistentVolumeClaim::entryway-exec-gateway-recordings",
      "kubernetes:core/v1:Secret::entryway-exec-gateway-auth",
      "kubernetes:core/v1:Service::entryway-exec-gateway",
      "kubernetes:core/v1:ServiceAccount::entryway-exec-gateway",
      "kubernetes:networking.istio.io/v1:Gateway::entryway-exec-gateway-gw",
      "kubernetes:networking.istio.io/v1:VirtualService::entryway-exec-gateway-vs",
      "kubernetes:networking.k8s.io/v1:NetworkPolicy::entryway-exec-gateway",
      "kubernetes:policy/v1:PodDisruptionBudget::entryway-exec-gateway",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole::entryway-exec-gateway-exec",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding::entryway-exec-gateway-exec",
      "kubernetes:rbac.authorization.k8s.io/v1:Role::entryway-exec-gateway-team-a",
      "kubernetes:rbac.authorization.k8s.io/v1:Role::entryway-exec-gateway-team-b",
      "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding::entryway-exec-gateway-team-a",
      "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding::entryway-exec-gateway-team-b",
    ]);
    expect(
      await urns({
        targetNamespaces: ["team-a"],
        autoscaling: { minReplicas: 2, maxReplicas: 3 },
        exposure: { kind: "ingress", ...exposure },
      }),
    ).toEqual([
      "kubernetes:apps/v1:Deployment::entryway-exec-gateway",
      "kubernetes:autoscaling/v2:HorizontalPodAutoscaler::entryway-exec-gateway",
      "kubernetes:core/v1:ConfigMap::entryway-exec-gateway",
      "kubernetes:core/v1:Service::entryway-exec-gateway",
      "kubernetes:core/v1:ServiceAccount::entryway-exec-gateway",
      "kubernetes:networking.k8s.io/v1:Ingress::entryway-exec-gateway",
      "kubernetes:networking.k8s.io/v1:NetworkPolicy::entryway-exec-gateway",
      "kubernetes:policy/v1:PodDisruptionBudget::entryway-exec-gateway",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole::entryway-exec-gateway-review",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding::entryway-exec-gateway-review",
      "kubernetes:rbac.authorization.k8s.io/v1:Role::entryway-exec-gateway-team-a",
      "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding::entryway-exec-gateway-team-a",
    ]);
  });

  it("rolls the pods when a setting changes (checksum/config of the document), and only then", async () => {
    // The ConfigMap keeps its name, so a changed document alone would reach running pods only as a
    // file they never read again; the pod template's checksum of that document is what rolls them.
    const rendered = async (settings: ExecGatewayArgs["settings"]) => {
      const { manifests } = await renderGateway({ settings });
      const configMap = findManifest(manifests, "ConfigMap", "entryway-exec-gateway") as Obj;
      const deployment = findManifest(manifests, "Deployment", "entryway-exec-gateway") as Obj;
      return {
        document: configMap.data["config.json"] as string,
        checksum: (deployment.spec.template.metadata.annotations as Record<string, string>)["checksum/config"],
        volumes: deployment.spec.template.spec.volumes as Obj[],
      };
    };
    const before = await rendered({ idleTimeoutMs: 600000 });
    const after = await rendered({ idleTimeoutMs: 900000, reapGraceSeconds: 5, reapTimeoutMs: 20000 });
    expect(JSON.parse(after.document)).toMatchObject({
      idleTimeoutMs: 900000,
      reapGraceSeconds: 5,
      reapTimeoutMs: 20000,
    });
    for (const { document, checksum, volumes } of [before, after]) {
      expect(checksum).toBe(createHash("sha256").update(document, "utf8").digest("hex"));
      expect(volumes).toContainEqual({ name: "config", configMap: { name: "entryway-exec-gateway" } });
    }
    expect(after.checksum).not.toBe(before.checksum);
    expect((await rendered({ idleTimeoutMs: 600000 })).checksum).toBe(before.checksum);
  });

  it("refuses an unknown or mistyped setting before deployment, every one at once, as the gateway would at start", async () => {
    expect(
      await refusalLines({
        // As a YAML or Python program, or a stack config, can pass them: past TypeScript's types.
        settings: { idleTimout: 600000, maxSessions: "10", shell: [] } as unknown as ExecGatewayArgs["settings"],
      }),
    ).toEqual([
      'ExecGateway entryway: settings must NOT have additional properties "idleTimout"',
      "ExecGateway entryway: settings/maxSessions must be integer",
      "ExecGateway entryway: settings/shell must NOT have fewer than 1 items",
    ]);
  });

  it.each([
    [
      { reapGraceSeconds: 20 },
      "settings.reapTimeoutMs (15000) must be longer than settings.reapGraceSeconds (20) x 1000",
    ],
    [{ reapTimeoutMs: 2000 }, "settings.reapTimeoutMs (2000) must be longer than settings.reapGraceSeconds (2) x 1000"],
    [
      { bufferLowBytes: 2_000_000 },
      "settings.bufferLowBytes (2000000) must not exceed settings.bufferHighBytes (1048576)",
    ],
    [{ bufferHighBytes: 1000 }, "settings.bufferLowBytes (262144) must not exceed settings.bufferHighBytes (1000)"],
  ])(
    "checks the gateway's cross-field rules before deployment, a setting left out at its default (%j)",
    async (settings, message) => {
      await expect(renderGateway({ settings })).rejects.toThrow(`ExecGateway entryway: ${message}`);
    },
  );

  it("refuses its own namespace as a target also when the namespace is only known at deployment (an Output)", async () => {
    await expect(
      renderGateway({ namespace: pulumi.output("entryway"), targetNamespaces: ["entryway"] }),
    ).rejects.toThrow(/the gateway's own namespace/);
  });

  it("passes the hardening settings in the settings document, and lets browsers in only from the public host when exposed", async () => {
    // Each one is written into the document under its own name, unchanged.
    const hardening = {
      maxSessionSeconds: 28800,
      reauthorizeIntervalMs: 60000,
      maxPendingConnections: 100,
      maxPendingPerSource: 10,
      authAttemptsPerMinute: 30,
      trustedProxies: ["10.0.0.0/8"],
      tokenAudiences: ["entryway"],
    };
    const { manifests } = await renderGateway({
      authorizer: "oidc",
      oidc: {
        issuer: "https://login.example.com",
        audience: "entryway",
        maxTokenAgeSeconds: 3600,
        algorithms: ["ES256"],
      },
      settings: hardening,
      exposure: { kind: "istio", host: "exec.example.com", tlsSecretName: "t" },
    });
    expect(gatewaySettings(manifests as ObjectLike[])).toMatchObject({
      oidcMaxTokenAgeSeconds: 3600,
      oidcAlgorithms: ["ES256"],
      ...hardening,
      allowedOrigins: ["https://exec.example.com"],
    });
  });

  it("trusts the one proxy exposure routes through for the client address (trustedProxyHops 1), unless told otherwise", async () => {
    const hops = async (args: Partial<ExecGatewayArgs>) => {
      const { manifests } = await renderGateway(args);
      return gatewaySettings(manifests as ObjectLike[]).trustedProxyHops;
    };
    const exposure = { kind: "istio" as const, host: "exec.example.com", tlsSecretName: "t" };
    expect(await hops({ exposure })).toBe(1);
    expect(await hops({ exposure: { ...exposure, kind: "ingress" } })).toBe(1);
    expect(await hops({})).toBeUndefined();
    expect(await hops({ exposure, settings: { trustedProxies: ["10.0.0.0/8"] } })).toBeUndefined();
    expect(await hops({ exposure, settings: { trustedProxyHops: 2 } })).toBe(2);
    expect(await hops({ exposure, settings: { trustedProxyHops: 0 } })).toBe(0);
    await expect(renderGateway({ settings: { trustedProxyHops: -1 } })).rejects.toThrow(
      /settings\/trustedProxyHops must be >= 0/,
    );
  });
});
