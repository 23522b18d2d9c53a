import * as pulumi from "@pulumi/pulumi";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AnsibleForms, type AnsibleFormsArgs } from "../../components/ansibleforms";
import { MIN_TOKEN_LENGTH } from "../../components/ansibleforms/common";
import { DATABASE_MODE_WARNING } from "../../components/ansibleforms/database-rte";
import { RemoteRte, type RemoteRteArgs } from "../../components/ansibleforms/remote-rte";
import { seedProblems } from "../../components/ansibleforms/runner-seed";
import { REDACTED } from "../../testkit/offline/manifests";
import { isSecretOutput, outputOf, render } from "../../testkit/harness/pulumi";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { DNS_RULE, namespacePeer } from "../foundation/network-peers";
import {
  APP_ONLY_ENV,
  appVolumeMountsOf,
  container,
  envNames,
  envOf,
  expectDatabaseModeRte,
  failure,
  find,
  PLAYBOOK_FOLDER_MOUNTS,
  REFUSED_IN_BOTH,
  podSpec,
  seedOf,
  sidecarPod,
  volumeAt,
} from "./helpers";

const ns = "forms";

async function renderForms(args: Partial<AnsibleFormsArgs> = {}) {
  let forms: AnsibleForms | undefined;
  const { manifests, resources } = await render(() => {
    forms = new AnsibleForms("entryway", { namespace: ns, ...args });
  });
  return { objects: manifests as ObjectLike[], resources, forms: forms! };
}

async function renderRemote(args: Partial<RemoteRteArgs> = {}) {
  const { manifests } = await render(() => {
    new RemoteRte("entryway", {
      namespace: "rte",
      appUrl: "https://forms.example.com",
      existingTokenSecret: "rte-token",
      ...args,
    });
  });
  return manifests as ObjectLike[];
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("AnsibleForms with an inbound sidecar RTE", async () => {
  const { objects, resources, forms } = await renderForms();
  const { deployment, pod, app, rte } = sidecarPod(objects);

  it("renders valid objects, each named and namespaced", async () => {
    await assertValidObjects(objects);
    for (const o of objects) expect(o.metadata?.namespace, `${o.kind}/${o.metadata?.name}`).toBe(ns);
    expect(objects.map((o) => `${o.kind}/${o.metadata?.name}`).sort()).toEqual([
      "ConfigMap/entryway-ansibleforms-seed",
      "Deployment/entryway-ansibleforms",
      "NetworkPolicy/entryway-ansibleforms",
      "NetworkPolicy/entryway-ansibleforms-mysql",
      "PersistentVolumeClaim/entryway-ansibleforms-persistent",
      "PersistentVolumeClaim/entryway-ansibleforms-rte-spool",
      "Secret/entryway-ansibleforms-db",
      "Secret/entryway-ansibleforms-keys",
      "Secret/entryway-ansibleforms-rte-token",
      "Service/entryway-ansibleforms",
      "Service/entryway-ansibleforms-mysql",
      "StatefulSet/entryway-ansibleforms-mysql",
    ]);
  });

  it("the app reads the seed at CONFIG_SEED_PATH; it parses, obeys the seed rules and makes the sidecar the default inbound runner", () => {
    const { seed } = seedOf(objects, pod, app);
    expect(seed.version).toBe(1);
    expect(seedProblems({ prune: seed.runners.prune, runners: seed.runners.items as never }, envNames(app))).toEqual(
      [],
    );
    expect(seed.runners.items).toEqual([
      {
        name: "rte",
        type: "rte",
        mode: "inbound",
        uri: `http://127.0.0.1:${rte.ports![0].containerPort}`,
        token: "${RTE_TOKEN}",
        is_default: true,
      },
    ]);
    expect(forms.seed).toContain("token: ${RTE_TOKEN}");
  });

  it("app and RTE read one token Secret; the token is never a literal", () => {
    const appToken = envOf(app, "RTE_TOKEN")!;
    const rteToken = envOf(rte, "RTE_TOKEN")!;
    expect(appToken.value).toBeUndefined();
    expect(appToken.valueFrom?.secretKeyRef).toEqual({ name: "entryway-ansibleforms-rte-token", key: "token" });
    expect(rteToken).toEqual(appToken);
    const tokenResource = resources.find((r) => r.name === "entryway-rte-token" && r.type.startsWith("random:"));
    expect(tokenResource?.inputs).toMatchObject({ length: 32 });
    expect(find(objects, "Secret", "entryway-ansibleforms-rte-token").stringData).toEqual({ token: REDACTED });
  });

  it("app and sidecar listen on different ports in the shared pod network", () => {
    const appPort = app.ports![0].containerPort;
    const rtePort = rte.ports![0].containerPort;
    expect(appPort).toBe(8000);
    expect(rtePort).not.toBe(appPort);
    expect(envOf(rte, "PORT")?.value).toBe(String(rtePort));
    expect(envOf(app, "PORT")?.value).toBe(String(appPort));
    expect(envOf(rte, "RTE_MODE")?.value).toBe("inbound");
  });

  it("the spool sits on a persistent volume, the app's disk too", () => {
    const spool = envOf(rte, "RTE_SPOOL_PATH")!.value!;
    expect(volumeAt(pod, rte, spool)?.claim).toBe("entryway-ansibleforms-rte-spool");
    expect(volumeAt(pod, app, "/app/dist/persistent")?.claim).toBe("entryway-ansibleforms-persistent");
    // transfer (the default): the RTE does not get the app's volume, not even its ssh folder.
    expect(envOf(rte, "RTE_FILES")?.value).toBe("transfer");
    expect(volumeAt(pod, rte, "/app/dist/persistent")).toBeUndefined();
    expect(rte.volumeMounts!.filter((m) => m.name === "persistent")).toEqual([]);
    // The app keeps the ssh keys it manages on its own volume.
    expect(app.volumeMounts).toContainEqual({ name: "persistent", mountPath: "/home/node/.ssh", subPath: "ssh" });
  });

  it("holds the boundary: the RTE has only its token, runs as uid 1000, non-root", () => {
    expect(envNames(rte).filter((n) => APP_ONLY_ENV.test(n))).toEqual([]);
    expect(envNames(app)).toEqual(expect.arrayContaining(["DB_PASSWORD", "ENCRYPTION_SECRET", "ACCESS_TOKEN_SECRET"]));
    for (const c of [app, rte]) {
      expect(c.securityContext).toMatchObject({
        runAsUser: 1000,
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
      });
    }
    expect(pod.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true, fsGroup: 1000 });
    for (const c of pod.containers) {
      for (const e of c.env ?? []) {
        if (/TOKEN|SECRET|PASSWORD/.test(e.name)) expect(e.value, `${c.name} ${e.name}`).toBeUndefined();
      }
    }
  });

  it("NetworkPolicies: only the app reaches MySQL; the sidecar's port is not admitted into the pod", () => {
    const mysqlPolicy = find(objects, "NetworkPolicy", "entryway-ansibleforms-mysql").spec as {
      ingress: { from: unknown[]; ports: { port: number }[] }[];
    };
    const appSelector = (deployment.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    expect(mysqlPolicy.ingress).toEqual([
      { from: [{ podSelector: { matchLabels: appSelector } }], ports: [{ port: 3306, protocol: "TCP" }] },
    ]);
    const appPolicy = find(objects, "NetworkPolicy", "entryway-ansibleforms").spec as {
      ingress: { ports: { port: number }[] }[];
      podSelector: unknown;
      egress: unknown[];
    };
    expect(appPolicy.podSelector).toEqual({ matchLabels: appSelector });
    expect(appPolicy.ingress.flatMap((rule) => rule.ports.map((p) => p.port))).toEqual([8000]);
    // Default: only the ingress controller's namespace reaches the app; the app dials DNS and MySQL only; MySQL dials nowhere.
    expect(appPolicy).toMatchObject({
      policyTypes: ["Ingress", "Egress"],
      ingress: [{ from: [namespacePeer("ingress-nginx")] }],
      egress: [
        DNS_RULE,
        {
          to: [{ podSelector: { matchLabels: { "app.kubernetes.io/component": "database" } } }],
          ports: [{ port: 3306, protocol: "TCP" }],
        },
      ],
    });
    expect(find(objects, "NetworkPolicy", "entryway-ansibleforms-mysql").spec).toMatchObject({
      policyTypes: ["Ingress", "Egress"],
      egress: [],
    });
    const service = find(objects, "Service", "entryway-ansibleforms").spec as { ports: { port: number }[] };
    expect(service.ports.map((p) => p.port)).toEqual([8000]);
  });

  it("single writer, probes on the app's paths, the RTE sized from RTE_MAX_JOBS and given its drain time", () => {
    expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
    expect(deployment.spec.replicas).toBe(1);
    expect(JSON.stringify(app)).toContain("/api/v2/ready");
    expect(envOf(rte, "RTE_MAX_JOBS")?.value).toBe("10");
    expect(rte.resources?.requests).toEqual({ cpu: "1100m", memory: "1536Mi" });
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(Number(envOf(rte, "RTE_DRAIN_SECONDS")?.value));
  });

  it("generates every secret with @pulumi/random and outputs them as secrets; the admin password is never the default", async () => {
    const randoms = resources
      .filter((r) => r.type === "random:index/randomPassword:RandomPassword")
      .map((r) => [r.name, r.inputs.length]);
    expect(Object.fromEntries(randoms)).toEqual({
      "entryway-admin-password": 24,
      "entryway-encryption-secret": 32,
      "entryway-access-token-secret": 64,
      "entryway-rte-token": 32,
      "entryway-db-password": 32,
      "entryway-db-root-password": 32,
    });
    expect(await isSecretOutput(forms.adminPassword!)).toBe(true);
    expect(await isSecretOutput(forms.rteToken!)).toBe(true);
    expect(envOf(app, "ADMIN_PASSWORD")?.valueFrom?.secretKeyRef).toEqual({
      name: "entryway-ansibleforms-keys",
      key: "admin-password",
    });
    expect(await outputOf(forms.url)).toBe("http://entryway-ansibleforms.forms.svc.cluster.local:8000");
  });
});

describe("AnsibleForms sidecar options", () => {
  it("RTE_FILES=local mounts the app's playbook folders read-write, not its volume; ssh keys owner-only; /etc/ansible mounts; maxJobs sizes the RTE", async () => {
    const { objects } = await renderForms({
      rte: {
        files: "local",
        maxJobs: 4,
        sshSecret: "rte-ssh",
        ansibleCfg: "[defaults]\nforks = 5\n",
        collectionsClaim: "collections",
        rolesClaim: "roles",
      },
    });
    await assertValidObjects(objects);
    const pod = podSpec(find(objects, "Deployment", "entryway-ansibleforms"));
    const rte = container(pod, "rte");
    expect(appVolumeMountsOf(pod, rte)).toEqual(PLAYBOOK_FOLDER_MOUNTS);
    expect(pod.volumes!.find((v) => v.secret?.secretName === "rte-ssh")?.secret?.defaultMode).toBe(0o400);
    expect(volumeAt(pod, rte, "/home/node/.ssh/id_ed25519")?.name).toBe("rte-ssh");
    expect(volumeAt(pod, rte, "/etc/ansible/collections")?.claim).toBe("collections");
    expect(volumeAt(pod, rte, "/etc/ansible/roles")?.claim).toBe("roles");
    expect(find(objects, "ConfigMap", "entryway-ansibleforms-rte-ansible-cfg").data).toEqual({
      "ansible.cfg": "[defaults]\nforks = 5\n",
    });
    expect(envOf(rte, "RTE_MAX_JOBS")?.value).toBe("4");
    expect(rte.resources?.requests).toEqual({ cpu: "500m", memory: "768Mi" });
  });

  it("existing Secrets and an external database: nothing generated, no MySQL", async () => {
    const { objects, resources, forms } = await renderForms({
      existingSecrets: { keys: "my-keys", rteToken: "my-token" },
      externalDatabase: { host: "db.example.com", user: "forms", passwordSecret: { name: "my-db", key: "pw" } },
    });
    await assertValidObjects(objects);
    expect(resources.filter((r) => r.type.startsWith("random:"))).toEqual([]);
    expect(objects.filter((o) => o.kind === "Secret" || o.kind === "StatefulSet")).toEqual([]);
    expect(objects.find((o) => o.kind === "NetworkPolicy" && o.metadata?.name?.includes("mysql"))).toBeUndefined();
    const pod = podSpec(find(objects, "Deployment", "entryway-ansibleforms"));
    const app = container(pod, "ansibleforms");
    expect(envOf(app, "DB_HOST")?.value).toBe("db.example.com");
    expect(envOf(app, "DB_PORT")?.value).toBe("3306");
    expect(envOf(app, "DB_PASSWORD")?.valueFrom?.secretKeyRef).toEqual({ name: "my-db", key: "pw" });
    expect(envOf(container(pod, "rte"), "RTE_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "my-token",
      key: "token",
    });
    expect(forms.adminPassword).toBeUndefined();
  });

  it("awx runners and prune go into the seed, their credentials as ${VAR} from Secrets in the app's env", async () => {
    const { objects } = await renderForms({
      secretEnv: [{ name: "AWX_TOKEN", secretName: "awx", key: "token" }],
      runners: {
        prune: true,
        items: [{ name: "awx", type: "awx", uri: "https://awx.example.com", token: "${AWX_TOKEN}" }],
      },
    });
    const pod = podSpec(find(objects, "Deployment", "entryway-ansibleforms"));
    const { seed } = seedOf(objects, pod, container(pod, "ansibleforms"));
    expect(seed.runners.prune).toBe(true);
    expect(seed.runners.items.map((r) => r.name)).toEqual(["rte", "awx"]);
    expect(envOf(container(pod, "ansibleforms"), "AWX_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "awx",
      key: "token",
    });
  });
});

describe("AnsibleForms with an outbound RTE elsewhere, and the RemoteRte", async () => {
  const { objects } = await renderForms({
    rte: { mode: "remote", runnerName: "dc2" },
    expose: { host: "forms.example.com", ingressClassName: "nginx", tlsSecretName: "forms-tls" },
    allowFrom: [namespacePeer("ingress-nginx")],
  });
  const remote = await renderRemote({
    replicas: 3,
    caBundle: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
  });

  it("the app pod has no RTE; its seed declares the outbound runner as default; an Ingress exposes it", async () => {
    await assertValidObjects(objects);
    const pod = podSpec(find(objects, "Deployment", "entryway-ansibleforms"));
    expect(pod.containers.map((c) => c.name)).toEqual(["ansibleforms"]);
    expect(objects.find((o) => o.metadata?.name === "entryway-ansibleforms-rte-spool")).toBeUndefined();
    const { seed } = seedOf(objects, pod, container(pod, "ansibleforms"));
    expect(seed.runners.items).toEqual([
      { name: "dc2", type: "rte", mode: "outbound", token: "${RTE_TOKEN}", is_default: true },
    ]);
    const ingress = find(objects, "Ingress", "entryway-ansibleforms").spec as { rules: { host: string }[] };
    expect(ingress.rules[0].host).toBe("forms.example.com");
    expect(find(objects, "NetworkPolicy", "entryway-ansibleforms").spec.ingress).toEqual([
      {
        from: [namespacePeer("ingress-nginx")],
        ports: [{ port: 8000, protocol: "TCP" }],
      },
    ]);
  });

  it("the RemoteRte: a StatefulSet of N replicas, each with its own spool claim, outbound, dialing the app, verifying its CA", async () => {
    await assertValidObjects(remote);
    for (const o of remote) expect(o.metadata?.namespace).toBe("rte");
    const sts = find(remote, "StatefulSet", "entryway-remote-rte");
    expect(sts.spec.replicas).toBe(3);
    const claims = sts.spec.volumeClaimTemplates as { metadata: { name: string } }[];
    const pod = podSpec(sts);
    const rte = container(pod, "rte");
    const spool = envOf(rte, "RTE_SPOOL_PATH")!.value!;
    const spoolMount = rte.volumeMounts!.find((m) => spool.startsWith(m.mountPath))!;
    expect(claims.map((c) => c.metadata.name)).toEqual([spoolMount.name]);
    expect(pod.volumes?.find((v) => v.name === spoolMount.name)).toBeUndefined();
    expect(envOf(rte, "RTE_MODE")?.value).toBe("outbound");
    expect(envOf(rte, "RTE_APP_URL")?.value).toBe("https://forms.example.com");
    expect(envOf(rte, "RTE_TOKEN")?.valueFrom?.secretKeyRef).toEqual({ name: "rte-token", key: "token" });
    const ca = envOf(rte, "NODE_EXTRA_CA_CERTS")!.value!;
    const caVolume = volumeAt(pod, rte, ca)!;
    expect(pod.volumes!.find((v) => v.name === caVolume.name)?.configMap?.name).toBe("entryway-remote-rte-ca");
    expect(find(remote, "ConfigMap", "entryway-remote-rte-ca").data).toEqual({
      "ca.crt": expect.stringContaining("BEGIN CERTIFICATE"),
    });
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(25);
  });

  it("the RemoteRte holds only its token, runs as uid 1000 and admits no connection", () => {
    const sts = find(remote, "StatefulSet", "entryway-remote-rte");
    const rte = container(podSpec(sts), "rte");
    expect(envNames(rte).filter((n) => APP_ONLY_ENV.test(n))).toEqual([]);
    expect(rte.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
    const policy = find(remote, "NetworkPolicy", "entryway-remote-rte").spec;
    // In: nothing. Out: DNS and the app's URL (a name: port 443 to any address).
    expect(policy).toEqual({
      podSelector: expect.anything(),
      policyTypes: ["Ingress", "Egress"],
      ingress: [],
      egress: [DNS_RULE, { ports: [{ port: 443, protocol: "TCP" }] }],
    });
  });

  it("dials plain http only with allowInsecureAppUrl (an app in the same trusted network)", async () => {
    const plain = await renderRemote({
      appUrl: "http://forms.forms.svc.cluster.local:8000",
      allowInsecureAppUrl: true,
    });
    expect(
      envOf(container(podSpec(find(plain, "StatefulSet", "entryway-remote-rte")), "rte"), "RTE_APP_URL")?.value,
    ).toBe("http://forms.forms.svc.cluster.local:8000");
  });

  it("egress to an IP literal is that address alone, on the URL's port; allowEgressTo follows", async () => {
    const byAddress = await renderRemote({
      appUrl: "https://10.1.2.3:8443",
      allowEgressTo: [{ to: [{ ipBlock: { cidr: "10.20.0.0/16" } }], ports: [{ port: 22 }] }],
    });
    expect(find(byAddress, "NetworkPolicy", "entryway-remote-rte").spec.egress).toEqual([
      DNS_RULE,
      { to: [{ ipBlock: { cidr: "10.1.2.3/32" } }], ports: [{ port: 8443, protocol: "TCP" }] },
      { to: [{ ipBlock: { cidr: "10.20.0.0/16" } }], ports: [{ port: 22 }] },
    ]);
    const { objects: external } = await renderForms({
      externalDatabase: {
        host: "192.168.5.6",
        port: 3307,
        user: "forms",
        passwordSecret: { name: "db", key: "password" },
      },
      ingressNamespace: "istio-system",
    });
    const appPolicy = find(external, "NetworkPolicy", "entryway-ansibleforms").spec;
    expect(appPolicy.egress).toEqual([
      DNS_RULE,
      { to: [{ ipBlock: { cidr: "192.168.5.6/32" } }], ports: [{ port: 3307, protocol: "TCP" }] },
    ]);
    expect(appPolicy.ingress).toEqual([
      {
        from: [namespacePeer("istio-system")],
        ports: [{ port: 8000, protocol: "TCP" }],
      },
    ]);
  });

  it("a token given as a value goes into a Secret of its own, never into the pod", async () => {
    const objects2 = await renderRemote({ existingTokenSecret: undefined, token: "a-long-enough-token-1234" });
    const secret = find(objects2, "Secret", "entryway-remote-rte-token");
    expect(secret.stringData).toEqual({ token: REDACTED });
    expect(JSON.stringify(objects2)).not.toContain("a-long-enough-token-1234");
  });
});

describe("AnsibleForms metrics", () => {
  it("off by default: no METRICS_TOKEN anywhere, no monitor", async () => {
    const { objects } = await renderForms();
    expect(JSON.stringify(objects)).not.toContain("METRICS_TOKEN");
    expect(objects.filter((o) => /Monitor$/.test(o.kind))).toEqual([]);
  });

  it("on: app and sidecar get generated tokens of their own; monitors use them; Prometheus may reach both ports", async () => {
    const { objects } = await renderForms({ metrics: { enabled: true, serviceMonitor: true } });
    await assertValidObjects(objects);
    const pod = podSpec(find(objects, "Deployment", "entryway-ansibleforms"));
    const app = container(pod, "ansibleforms");
    const rte = container(pod, "rte");
    expect(envOf(app, "METRICS_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "entryway-ansibleforms-metrics",
      key: "token",
    });
    expect(envOf(rte, "METRICS_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "entryway-ansibleforms-rte-metrics",
      key: "token",
    });
    expect(find(objects, "Secret", "entryway-ansibleforms-rte-metrics").stringData).toEqual({ token: REDACTED });
    expect(
      (find(objects, "ServiceMonitor", "entryway-ansibleforms").spec as { endpoints: unknown[] }).endpoints,
    ).toEqual([
      {
        port: "http",
        path: "/api/v2/metrics",
        authorization: { type: "Bearer", credentials: { name: "entryway-ansibleforms-metrics", key: "token" } },
      },
    ]);
    expect(
      (find(objects, "PodMonitor", "entryway-ansibleforms-rte").spec as { podMetricsEndpoints: unknown[] })
        .podMetricsEndpoints,
    ).toEqual([
      {
        port: "rte",
        path: "/metrics",
        authorization: { type: "Bearer", credentials: { name: "entryway-ansibleforms-rte-metrics", key: "token" } },
      },
    ]);
    expect(find(objects, "NetworkPolicy", "entryway-ansibleforms").spec.ingress).toContainEqual({
      from: [namespacePeer("monitoring")],
      ports: [
        { port: 8000, protocol: "TCP" },
        { port: 8001, protocol: "TCP" },
      ],
    });
  });

  it("refuses the app's metrics Secret for the RTE; the RemoteRte gets its own token and a PodMonitor", async () => {
    await expect(
      renderForms({ metrics: { enabled: true, existingSecret: "m", rteExistingSecret: "m" } }),
    ).rejects.toThrow(/RTE's METRICS_TOKEN must come from a Secret of its own/);
    const remote = await renderRemote({ metrics: { enabled: true, serviceMonitor: true } });
    await assertValidObjects(remote);
    const rte = container(podSpec(find(remote, "StatefulSet", "entryway-remote-rte")), "rte");
    expect(envOf(rte, "METRICS_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "entryway-remote-rte-metrics",
      key: "token",
    });
    find(remote, "PodMonitor", "entryway-remote-rte");
    expect(find(remote, "NetworkPolicy", "entryway-remote-rte").spec.ingress).toEqual([
      {
        from: [namespacePeer("monitoring")],
        ports: [{ port: 8000, protocol: "TCP" }],
      },
    ]);
  });
});

describe("AnsibleForms in the deprecated database mode", () => {
  it("warns at preview, and the RTE holds DB_* and the playbook folders, with no RTE_MODE, RTE_REGISTER=0 at its RTE_URL and no ENCRYPTION_SECRET", async () => {
    const warn = vi.spyOn(pulumi.log, "warn");
    const { objects } = await renderForms({ rte: { mode: "database" } });
    expect(warn).toHaveBeenCalledWith(DATABASE_MODE_WARNING, expect.anything());
    await assertValidObjects(objects);
    const pod = podSpec(find(objects, "Deployment", "entryway-ansibleforms"));
    const app = container(pod, "ansibleforms");
    expectDatabaseModeRte(pod); // the seed below declares its runner
    const { seed } = seedOf(objects, pod, app);
    expect(seed.runners.items[0]).toEqual({
      name: "rte",
      type: "rte",
      uri: "http://127.0.0.1:8001",
      token: "${RTE_TOKEN}",
      is_default: true,
    });
  });

  it("does not warn in the other modes", async () => {
    const warn = vi.spyOn(pulumi.log, "warn");
    await renderForms();
    expect(warn).not.toHaveBeenCalled();
  });
});

describe("bad input fails at preview with a clear message", () => {
  const cases: [string, () => Promise<unknown>, RegExp][] = [
    [
      "a token shorter than 16 characters (app)",
      () => renderForms({ rteToken: "short-token" }),
      new RegExp(`at least ${MIN_TOKEN_LENGTH} characters \\(got 11\\)`),
    ],
    [
      "a token shorter than 16 characters (RemoteRte)",
      () => renderRemote({ existingTokenSecret: undefined, token: "short" }),
      /at least 16 characters/,
    ],
    [
      "a token shorter than 16 characters given as an Output (known only once resolved)",
      () => renderForms({ rteToken: pulumi.secret(pulumi.output("short-token")) }),
      new RegExp(`at least ${MIN_TOKEN_LENGTH} characters \\(got 11\\)`),
    ],
    [
      "two default runners",
      () =>
        renderForms({
          runners: {
            items: [{ name: "other", type: "rte", mode: "outbound", token: "${RTE_TOKEN}", is_default: true }],
          },
        }),
      /more than one default runner: rte, other/,
    ],
    ["an outbound RTE without the app URL", () => renderRemote({ appUrl: "" }), /appUrl is required/],
    [
      "an outbound RTE dialing plain http (the token in clear)",
      () => renderRemote({ appUrl: "http://forms.example.com" }),
      /appUrl "http:\/\/forms.example.com" is plain http: the RTE token would cross the network unencrypted/,
    ],
    [
      "an outbound RTE dialing plain ws, known only at deployment",
      () => renderRemote({ appUrl: pulumi.output("ws://forms.example.com") }),
      /appUrl "ws:\/\/forms.example.com" is plain ws/,
    ],
    [
      "RTE_FILES=local with an outbound RTE (RemoteRte)",
      () => renderRemote({ files: "local" }),
      /"local" needs the app's disk/,
    ],
    ["an unknown mode", () => renderForms({ rte: { mode: "sideways" as never } }), /rte.mode "sideways" is unknown/],
    ["an unknown mode (RemoteRte)", () => renderRemote({ mode: "inbound" } as never), /mode "inbound" is unknown/],
    ...REFUSED_IN_BOTH.map(([name, settings, message]): [string, () => Promise<unknown>, RegExp] => [
      name,
      () => renderForms(settings),
      message,
    ]),
    [
      "an unknown field in a runner",
      () =>
        renderForms({
          runners: {
            items: [{ name: "x", type: "rte", mode: "outbound", token: "${RTE_TOKEN}", colour: "blue" } as never],
          },
        }),
      /runner "x" has unknown field "colour"/,
    ],
    [
      "a seed credential naming the app's own secret",
      () =>
        renderForms({
          runners: {
            items: [{ name: "awx", type: "awx", uri: "https://awx.example.com", password: "${ADMIN_PASSWORD}" }],
          },
        }),
      /password may reference only a token variable .* not \$\{ADMIN_PASSWORD\}/,
    ],
    [
      "a literal token in the seed",
      () =>
        renderForms({
          runners: { items: [{ name: "x", type: "rte", mode: "outbound", token: "abcdefghijklmnopqrstuvwxyz" }] },
        }),
      /token must be a \$\{VAR\} reference/,
    ],
  ];
  it.each(cases)("%s", async (_label, run, message) => {
    await expect(run()).rejects.toThrow(message);
  });

  it("AnsibleForms reports every problem at once, one a line, as an error of the component", async () => {
    const error = await failure(() =>
      renderForms({
        rteToken: "short",
        rte: { port: 8000, maxJobs: 0, extraEnv: [{ name: "RTE_MODE", value: "outbound" }] },
        runners: { items: [{ name: "x", type: "rte", mode: "outbound" } as never] },
      }),
    );
    expect(pulumi.ResourceError.isInstance(error)).toBe(true);
    expect(error.message.split("\n")).toEqual([
      "AnsibleForms entryway: rte.port 8000 is the app's port: the sidecar shares the pod's network, its port must differ",
      "AnsibleForms entryway: maxJobs must be a positive integer (got 0)",
      "AnsibleForms entryway: the RTE token must be at least 16 characters (got 5)",
      "AnsibleForms entryway: extraEnv RTE_MODE: set by the component (change the setting that sets it)",
      'AnsibleForms entryway: the runner seed is invalid: runner "x" is an rte runner without a token',
    ]);
  });

  it("RemoteRte reports every problem at once, one a line, as an error of the component", async () => {
    const error = await failure(() =>
      renderRemote({
        appUrl: "ftp://forms.example.com",
        files: "local",
        token: "short",
        extraEnv: [{ name: "RTE_APP_URL", value: "x" }],
      }),
    );
    expect(pulumi.ResourceError.isInstance(error)).toBe(true);
    expect(error.message.split("\n")).toEqual([
      'RemoteRte entryway: appUrl "ftp://forms.example.com" is not an http(s) URL',
      'RemoteRte entryway: files "local" needs the app\'s disk; an outbound RTE cannot share it (use "transfer")',
      "RemoteRte entryway: give a token or an existingTokenSecret, not both",
      "RemoteRte entryway: the RTE token must be at least 16 characters (got 5)",
      "RemoteRte entryway: extraEnv RTE_APP_URL: set by the component (change the setting that sets it)",
    ]);
  });
});
