import path from "node:path";
import { describe, expect, it } from "vitest";
import { DATABASE_MODE_WARNING } from "../../components/ansibleforms/database-rte";
import { renderSeed, seedProblems } from "../../components/ansibleforms/runner-seed";
import { helmBinaries, helmNotes, helmTemplate, repoRoot, runHelm } from "../../testkit/harness/helm";
import { assertValidObjects, type ObjectLike } from "../../testkit/harness/validate";
import { chart, chartValues } from "../foundation/chart-values";
import { DNS_RULE, namespacePeer } from "../foundation/network-peers";
import {
  APP_ONLY_ENV,
  appVolumeMountsOf,
  container,
  envNames,
  envOf,
  expectDatabaseModeRte,
  find,
  PLAYBOOK_FOLDER_MOUNTS,
  REFUSED_IN_BOTH,
  SIDECAR_RUNNER,
  podSpec,
  seedOf,
  sidecarPod,
  volumeAt,
} from "./helpers";

const scenario = (name: string) => path.join(chart, "ci", `ansibleforms-${name}.yaml`);
const { valuesFile } = chartValues("af-chart");

const baseForms = {
  enabled: true,
  existingSecrets: { keys: "forms-keys", database: "forms-db", rteToken: "forms-rte-token" },
};

describe.each(helmBinaries().map((h) => [`helm ${h.version}`, h] as const))("%s", (_label, helm) => {
  const template = (files: string[], set: string[] = []) => helmTemplate(helm, chart, { valuesFiles: files, set });
  const templateError = (files: string[], set: string[] = []) => {
    const result = runHelm(helm, [
      "template",
      "entryway",
      chart,
      "--namespace",
      "entryway",
      ...files.flatMap((f) => ["-f", f]),
      ...set.flatMap((s) => ["--set", s]),
    ]);
    expect(result.ok, "helm template should have failed").toBe(false);
    return result.output;
  };

  describe("sidecar (inbound)", () => {
    const objects = template([scenario("sidecar")]);
    const { deployment, pod, app, rte } = sidecarPod(objects);

    it("renders valid objects", async () => {
      await assertValidObjects(objects);
      expect(
        objects
          .filter((o) => o.metadata?.name?.includes("ansibleforms"))
          .every((o) => o.metadata?.namespace === "entryway"),
      ).toBe(true);
    });

    it("the app reads the seed at CONFIG_SEED_PATH; it parses, obeys the rules, and is what the Pulumi RunnerSeed renders", () => {
      const { text, seed } = seedOf(objects, pod, app);
      expect(seedProblems({ runners: seed.runners.items as never }, envNames(app))).toEqual([]);
      expect(seed.runners.items).toEqual([SIDECAR_RUNNER]);
      expect(text).toBe(renderSeed({ runners: seed.runners.items as never }, envNames(app)));
    });

    it("one token Secret for app and RTE, distinct ports, spool on a claim, the boundary holds", () => {
      expect(envOf(rte, "RTE_TOKEN")).toEqual(envOf(app, "RTE_TOKEN"));
      expect(envOf(app, "RTE_TOKEN")?.valueFrom?.secretKeyRef).toEqual({ name: "forms-rte-token", key: "token" });
      expect(rte.ports![0].containerPort).not.toBe(app.ports![0].containerPort);
      expect(volumeAt(pod, rte, envOf(rte, "RTE_SPOOL_PATH")!.value!)?.claim).toBe("entryway-ansibleforms-rte-spool");
      find(objects, "PersistentVolumeClaim", "entryway-ansibleforms-rte-spool");
      // Metrics on: the RTE's METRICS_TOKEN is its own, from another Secret than the app's; nothing else of the app's.
      expect(envOf(app, "METRICS_TOKEN")?.valueFrom?.secretKeyRef).toEqual({ name: "forms-metrics", key: "token" });
      expect(envOf(rte, "METRICS_TOKEN")?.valueFrom?.secretKeyRef).toEqual({ name: "forms-rte-metrics", key: "token" });
      expect(envNames(rte).filter((n) => APP_ONLY_ENV.test(n) && n !== "METRICS_TOKEN")).toEqual([]);
      for (const c of [app, rte]) expect(c.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
      expect(pod.volumes!.find((v) => v.name === "rte-ssh")?.secret?.defaultMode).toBe(0o400);
      expect(rte.resources?.requests).toEqual({ cpu: "500m", memory: "768Mi" });
      expect(deployment.spec.strategy).toEqual({ type: "Recreate" });
    });

    it("NetworkPolicies: only the app reaches MySQL, which dials nowhere; only the ingress namespace reaches the app's port; the app dials DNS and MySQL only", () => {
      const selector = (deployment.spec as { selector: { matchLabels: unknown } }).selector.matchLabels;
      const mysql = find(objects, "NetworkPolicy", "entryway-ansibleforms-mysql").spec;
      expect(mysql).toMatchObject({ policyTypes: ["Ingress", "Egress"], egress: [] });
      expect(mysql.ingress).toEqual([
        { from: [{ podSelector: { matchLabels: selector } }], ports: [{ port: 3306, protocol: "TCP" }] },
      ]);
      const appPolicy = find(objects, "NetworkPolicy", "entryway-ansibleforms").spec;
      expect(appPolicy.policyTypes).toEqual(["Ingress", "Egress"]);
      expect(appPolicy.ingress).toEqual([
        {
          from: [namespacePeer("ingress-nginx")],
          ports: [{ port: 8000, protocol: "TCP" }],
        },
        // Metrics on: Prometheus's pods in the monitoring namespace scrape the app's port and the sidecar's.
        {
          from: [namespacePeer("monitoring", { "app.kubernetes.io/name": "prometheus" })],
          ports: [
            { port: 8000, protocol: "TCP" },
            { port: 8001, protocol: "TCP" },
          ],
        },
      ]);
      const mysqlSelector = (
        find(objects, "StatefulSet", "entryway-ansibleforms-mysql").spec as { selector: { matchLabels: unknown } }
      ).selector.matchLabels;
      expect(appPolicy.egress).toEqual([
        DNS_RULE,
        { to: [{ podSelector: { matchLabels: mysqlSelector } }], ports: [{ port: 3306, protocol: "TCP" }] },
      ]);
    });

    it("metrics: a ServiceMonitor for the app with the app's token, a PodMonitor for the sidecar's port with the RTE's own", async () => {
      const selector = (deployment.spec as { selector: { matchLabels: unknown } }).selector.matchLabels;
      expect(find(objects, "ServiceMonitor", "entryway-ansibleforms").spec).toEqual({
        selector: { matchLabels: selector },
        endpoints: [
          {
            port: "http",
            path: "/api/v2/metrics",
            authorization: { type: "Bearer", credentials: { name: "forms-metrics", key: "token" } },
          },
        ],
      });
      expect(find(objects, "PodMonitor", "entryway-ansibleforms-rte").spec).toEqual({
        selector: { matchLabels: selector },
        podMetricsEndpoints: [
          {
            port: "rte",
            path: "/metrics",
            authorization: { type: "Bearer", credentials: { name: "forms-rte-metrics", key: "token" } },
          },
        ],
      });
      // The named ports exist: the Service's "http", the pod's "rte".
      expect(
        (find(objects, "Service", "entryway-ansibleforms").spec as { ports: { name: string }[] }).ports.map(
          (p) => p.name,
        ),
      ).toContain("http");
      expect(rte.ports!.map((p) => p.name)).toEqual(["rte"]);
      // Off by default: no token, no monitor.
      const plain = template([valuesFile({ ansibleForms: baseForms })]);
      expect(plain.filter((o) => o.kind === "ServiceMonitor" || o.kind === "PodMonitor")).toEqual([]);
      expect(JSON.stringify(plain)).not.toContain("METRICS_TOKEN");
    });

    it("generates no secret and ships no default admin password", () => {
      expect(objects.filter((o) => o.kind === "Secret")).toEqual([]);
      expect(envOf(app, "ADMIN_PASSWORD")?.valueFrom?.secretKeyRef).toEqual({
        name: "forms-keys",
        key: "admin-password",
      });
    });
  });

  it("sidecar with RTE_FILES=local, an external DB, an awx runner and a token Secret from a value", async () => {
    const objects = template([scenario("sidecar-local-files")]);
    await assertValidObjects(objects);
    const pod = podSpec(find(objects, "Deployment", "entryway-ansibleforms"));
    const rte = container(pod, "rte");
    const app = container(pod, "ansibleforms");
    // The external database is a name: its port to any address; then the scenario's allowEgressTo.
    expect(find(objects, "NetworkPolicy", "entryway-ansibleforms").spec.egress).toEqual([
      DNS_RULE,
      { ports: [{ port: 3306, protocol: "TCP" }] },
      { to: [{ ipBlock: { cidr: "10.20.0.0/16" } }], ports: [{ port: 22 }] },
      { ports: [{ port: 443, protocol: "TCP" }] },
    ]);
    // The playbook folders read-write, the ssh folder read-only: never the whole volume.
    expect(appVolumeMountsOf(pod, rte)).toEqual([
      ...PLAYBOOK_FOLDER_MOUNTS,
      { name: "persistent", mountPath: "/home/node/.ssh", subPath: "ssh", readOnly: true },
    ]);
    // sshFromApp: the app's ssh folder (on its volume, subPath ssh) read-only in the RTE.
    expect(app.volumeMounts).toContainEqual({ name: "persistent", mountPath: "/home/node/.ssh", subPath: "ssh" });
    expect(rte.volumeMounts).toContainEqual({
      name: "persistent",
      mountPath: "/home/node/.ssh",
      subPath: "ssh",
      readOnly: true,
    });
    expect(objects.find((o) => o.kind === "StatefulSet")).toBeUndefined();
    expect(envOf(app, "DB_HOST")?.value).toBe("mysql.databases.svc.cluster.local");
    const secret = find(objects, "Secret", "entryway-ansibleforms-rte-token") as unknown as {
      stringData: Record<string, string>;
    };
    expect(Object.keys(secret.stringData)).toEqual(["token"]);
    expect(envOf(rte, "RTE_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "entryway-ansibleforms-rte-token",
      key: "token",
    });
    const { seed } = seedOf(objects, pod, app);
    expect(seed.runners.prune).toBe(true);
    expect(seed.runners.items.map((r) => r.name)).toEqual(["rte", "awx"]);
    // The token appears only in its Secret.
    expect(objects.filter((o) => JSON.stringify(o).includes("0123456789abcdef0123")).map((o) => o.kind)).toEqual([
      "Secret",
    ]);
  });

  it("outbound: the app has no RTE in its pod and seeds the outbound runner; the second cluster runs only the RemoteRte", async () => {
    const app = template([scenario("remote")]);
    await assertValidObjects(app);
    const pod = podSpec(find(app, "Deployment", "entryway-ansibleforms"));
    expect(pod.containers.map((c) => c.name)).toEqual(["ansibleforms"]);
    expect(seedOf(app, pod, pod.containers[0]).seed.runners.items).toEqual([
      { name: "dc2", type: "rte", mode: "outbound", token: "${RTE_TOKEN}", is_default: true },
    ]);
    find(app, "Ingress", "entryway-ansibleforms");
    // allowFrom: only the ingress controller's namespace reaches the app's port.
    expect(find(app, "NetworkPolicy", "entryway-ansibleforms").spec.ingress).toEqual([
      {
        from: [namespacePeer("ingress-nginx")],
        ports: [{ port: 8000, protocol: "TCP" }],
      },
    ]);

    const remote = template([scenario("remote-rte")]);
    await assertValidObjects(remote);
    expect(remote.map((o) => `${o.kind}/${o.metadata?.name}`).sort()).toEqual([
      "ConfigMap/entryway-remote-rte-ca",
      // The release's namespace denies by default; the RTE's own policy lets out DNS and the app.
      "NetworkPolicy/entryway-allow-dns",
      "NetworkPolicy/entryway-default-deny",
      "NetworkPolicy/entryway-remote-rte",
      "PodMonitor/entryway-remote-rte",
      "StatefulSet/entryway-remote-rte",
    ]);
    const sts = find(remote, "StatefulSet", "entryway-remote-rte");
    expect(sts.spec.replicas).toBe(2);
    const rpod = podSpec(sts);
    const rte = container(rpod, "rte");
    expect(envOf(rte, "RTE_MODE")?.value).toBe("outbound");
    expect(envOf(rte, "RTE_APP_URL")?.value).toBe("https://forms.example.com");
    expect(envOf(rte, "RTE_TOKEN")?.valueFrom?.secretKeyRef).toEqual({ name: "forms-rte-token", key: "token" });
    expect((sts.spec.volumeClaimTemplates as { metadata: { name: string } }[]).map((c) => c.metadata.name)).toEqual([
      "rte-spool",
    ]);
    expect(rte.volumeMounts!.find((m) => m.mountPath === envOf(rte, "RTE_SPOOL_PATH")!.value)?.name).toBe("rte-spool");
    expect(envNames(rte).filter((n) => APP_ONLY_ENV.test(n) && n !== "METRICS_TOKEN")).toEqual([]);
    expect(envOf(rte, "METRICS_TOKEN")?.valueFrom?.secretKeyRef).toEqual({ name: "rte-metrics", key: "token" });
    expect(find(remote, "PodMonitor", "entryway-remote-rte").spec).toEqual({
      selector: { matchLabels: (sts.spec as { selector: { matchLabels: unknown } }).selector.matchLabels },
      podMetricsEndpoints: [
        {
          port: "rte",
          path: "/metrics",
          authorization: { type: "Bearer", credentials: { name: "rte-metrics", key: "token" } },
        },
      ],
    });
    // In: only Prometheus (metrics on). Out: DNS and the app's URL; forms.example.com is a name, so port 443 to any address.
    expect(find(remote, "NetworkPolicy", "entryway-remote-rte").spec).toMatchObject({
      policyTypes: ["Ingress", "Egress"],
      ingress: [
        {
          from: [namespacePeer("observability")],
          ports: [{ port: 8000, protocol: "TCP" }],
        },
      ],
      egress: [DNS_RULE, { ports: [{ port: 443, protocol: "TCP" }] }],
    });
  });

  it("database mode: the deprecation is rendered as an annotation; the RTE holds DB_* and the playbook folders, registers nothing and has no ENCRYPTION_SECRET", async () => {
    const objects = template([scenario("database")]);
    await assertValidObjects(objects);
    const deployment = find(objects, "Deployment", "entryway-ansibleforms");
    expect(deployment.metadata?.annotations?.["entryway/deprecated"]).toBe(DATABASE_MODE_WARNING);
    expectDatabaseModeRte(podSpec(deployment));
    expect(objects.find((o) => o.metadata?.name === "entryway-ansibleforms-rte-spool")).toBeUndefined();
  });

  it("database mode: install prints the deprecation warning in NOTES; other modes do not", () => {
    expect(helmNotes(helm, chart, scenario("database"))).toContain(`WARNING: ${DATABASE_MODE_WARNING}`);
    expect(helmNotes(helm, chart, scenario("sidecar"))).not.toContain("WARNING");
  });

  it("an outbound RTE dials plain http only with allowInsecureAppUrl", () => {
    const file = valuesFile({
      remoteRte: {
        enabled: true,
        appUrl: "http://forms.forms.svc.cluster.local:8000",
        allowInsecureAppUrl: true,
        existingTokenSecret: "t",
      },
    });
    const rte = container(podSpec(find(template([file]), "StatefulSet", "entryway-remote-rte")), "rte");
    expect(envOf(rte, "RTE_APP_URL")?.value).toBe("http://forms.forms.svc.cluster.local:8000");
  });

  describe("bad input fails at template time with a clear message", () => {
    const forms = (extra: Record<string, unknown>) => valuesFile({ ansibleForms: { ...baseForms, ...extra } });
    const remote = (extra: Record<string, unknown>) =>
      valuesFile({
        remoteRte: { enabled: true, appUrl: "https://forms.example.com", existingTokenSecret: "t", ...extra },
      });
    const cases: [string, () => string, RegExp][] = [
      [
        "a token shorter than 16 characters (app)",
        () => forms({ existingSecrets: { keys: "k", database: "d" }, rteToken: "short-token" }),
        /at least 16 characters \(got 11\)/,
      ],
      [
        "a token shorter than 16 characters (remote)",
        () => remote({ existingTokenSecret: "", token: "short" }),
        /remoteRte: the RTE token must be at least 16 characters/,
      ],
      [
        "two default runners",
        () =>
          forms({
            runners: { items: [{ name: "b", type: "rte", mode: "outbound", token: "${RTE_TOKEN}", is_default: true }] },
          }),
        /more than one default runner: rte, b/,
      ],
      ["outbound without the app URL", () => remote({ appUrl: "" }), /remoteRte: appUrl is required/],
      [
        "outbound over plain http (the token in clear)",
        () => remote({ appUrl: "http://forms.example.com" }),
        /appUrl "http:\/\/forms.example.com" is plain http: the RTE token would cross the network unencrypted/,
      ],
      ["RTE_FILES=local with the outbound RTE", () => remote({ files: "local" }), /"local" needs the app's disk/],
      ["an unknown mode", () => forms({ rte: { mode: "sideways" } }), /mode.*(sidecar|must be one of)/],
      ["an unknown remote mode", () => remote({ mode: "inbound" }), /mode.*outbound/],
      ...REFUSED_IN_BOTH.map(([name, settings, message]): [string, () => string, RegExp] => [
        name,
        () => forms(settings),
        message,
      ]),
      [
        "an unknown runner field",
        () =>
          forms({
            runners: { items: [{ name: "x", type: "rte", mode: "outbound", token: "${RTE_TOKEN}", colour: "blue" }] },
          }),
        /colour/,
      ],
      [
        "a seed credential naming the app's own secret",
        () =>
          forms({ runners: { items: [{ name: "x", type: "rte", mode: "outbound", token: "${ENCRYPTION_SECRET}" }] } }),
        /token may reference only a token variable .* not \$\{ENCRYPTION_SECRET\}/,
      ],
      [
        "a literal token in the seed",
        () =>
          forms({ runners: { items: [{ name: "x", type: "rte", mode: "outbound", token: "abcdefghijklmnopqrstu" }] } }),
        /token must be a \$\{VAR\} reference/,
      ],
      [
        "metrics without the app's token Secret",
        () => forms({ metrics: { enabled: true, rteExistingSecret: "r" } }),
        /metrics.existingSecret is required/,
      ],
      [
        "metrics without the sidecar's own token Secret",
        () => forms({ metrics: { enabled: true, existingSecret: "m" } }),
        /metrics.rteExistingSecret is required/,
      ],
      [
        "the app's metrics Secret given to the RTE",
        () => forms({ metrics: { enabled: true, existingSecret: "m", rteExistingSecret: "m" } }),
        /RTE's METRICS_TOKEN must come from a Secret of its own/,
      ],
      [
        "remote metrics without the RTE's token Secret",
        () => remote({ metrics: { enabled: true } }),
        /remoteRte: metrics.existingSecret is required/,
      ],
      [
        "no keys Secret (the chart never generates secrets)",
        () => forms({ existingSecrets: { database: "d", rteToken: "t" } }),
        /existingSecrets.keys is required/,
      ],
    ];
    it.each(cases)("%s", (_name, values, message) => {
      expect(templateError([values()])).toMatch(message);
    });
  });
});

describe("objects from both scenarios list", () => {
  it("every AnsibleForms chart scenario has a stack config for the parity test", async () => {
    const { readdirSync, existsSync } = await import("node:fs");
    const scenarios = readdirSync(path.join(chart, "ci")).filter((f) => f.startsWith("ansibleforms-"));
    expect(scenarios.length).toBeGreaterThanOrEqual(5);
    for (const file of scenarios) {
      expect(existsSync(path.join(repoRoot, "test/parity", file.replace(/\.yaml$/, ".stack.yaml"))), file).toBe(true);
    }
  });
});

export type { ObjectLike };
