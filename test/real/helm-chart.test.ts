/**
 * The chart on the real API server (test/real/global-setup.ts), with Helm 4 and Helm 3 built from
 * their Go modules: `helm install --wait` of every ci/ scenario (kwok's node makes every pod
 * Ready, so --wait waits for all of them), a `helm upgrade` whose values change rolls exactly the
 * workload it should, `helm uninstall` leaving nothing but the volumes StatefulSets keep by design,
 * and the RBAC the chart grants, decided by the real authorizer.
 *
 * This control plane has no load balancer: the CONNECT gateway's Service is a NodePort
 * (`connectGateway.serviceType`, the chart's own setting for clusters without one). Helm 3's --wait
 * would otherwise wait for a load balancer address (helm.sh/helm/v3 pkg/kube/ready.go, serviceReady).
 * As on a user's cluster, what a scenario refers to but does not make exists first: the namespaces
 * it enters, the PersistentVolumeClaims it mounts by name, nodes with the labels its pods select,
 * its PriorityClasses and StorageClasses.
 */
import path from "node:path";
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { describe, expect, inject, it } from "vitest";
import { fakeNode } from "../../testkit/harness/control-plane";
import { chartScenarios, helmBinaries, helmEnv, helmTemplate, repoRoot, type Helm } from "../../testkit/harness/helm";
import { run } from "../../testkit/harness/process";
import { expectRbacAsDeployed } from "./rbac-matrix";

const { kubeconfig } = inject("controlPlane");
const chart = path.join(repoRoot, "charts", "entryway");
const scenarios = chartScenarios().find((c) => c.chart === chart)!.scenarios;
const NO_LOAD_BALANCER = ["connectGateway.serviceType=NodePort"];

const config = new KubeConfig();
config.loadFromFile(kubeconfig);
const core = config.makeApiClient(CoreV1Api);
const objects = KubernetesObjectApi.makeApiClient(config);

async function helm(h: Helm, args: string[]): Promise<string> {
  const result = await run(h.path, args, { env: helmEnv(kubeconfig) });
  if (result.status !== 0)
    throw new Error(`helm ${h.major} ${args.slice(0, 2).join(" ")} failed: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

async function ensureNamespace(name: string): Promise<void> {
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
}

/** The namespaces a scenario's objects are in and that the chart does not make itself (target namespaces). */
function namespacesOf(rendered: KubernetesObject[]): string[] {
  const owned = new Set(rendered.filter((o) => o.kind === "Namespace").map((o) => o.metadata!.name!));
  return [
    ...new Set(rendered.map((o) => o.metadata?.namespace).filter((ns): ns is string => Boolean(ns) && !owned.has(ns!))),
  ];
}

type PodOwner = KubernetesObject & {
  spec?: { template?: { spec?: { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] } } };
};

/** Claims the scenario's pods mount by name that the chart does not make (a user's existing volume). */
async function makeExistingClaims(rendered: KubernetesObject[]): Promise<void> {
  const made = new Set(
    rendered
      .filter((o) => o.kind === "PersistentVolumeClaim")
      .map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`),
  );
  for (const owner of rendered as PodOwner[]) {
    for (const volume of owner.spec?.template?.spec?.volumes ?? []) {
      const claim = volume.persistentVolumeClaim?.claimName;
      const namespace = owner.metadata?.namespace;
      if (!claim || !namespace || made.has(`${namespace}/${claim}`)) continue;
      made.add(`${namespace}/${claim}`);
      await core.createNamespacedPersistentVolumeClaim({
        namespace,
        body: {
          metadata: { name: claim },
          spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
        },
      });
    }
  }
}

type PodSpecOwner = KubernetesObject & {
  spec?: {
    template?: { spec?: { nodeSelector?: Record<string, string>; priorityClassName?: string } };
    volumeClaimTemplates?: { spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } } }[];
    storageClassName?: string;
    resources?: { requests?: { storage?: string } };
  };
};

/**
 * What a user's cluster has for a scenario that names it: a fake node for each set of node labels
 * its pods select (kwok manages it), its PriorityClasses, and its StorageClasses with a volume of
 * each class ready to bind (static provisioning: kwok provisions only its own `kwok-volume` class).
 */
async function makeClusterPrerequisites(rendered: PodSpecOwner[]): Promise<void> {
  for (const owner of rendered) {
    const selector = owner.spec?.template?.spec?.nodeSelector;
    if (selector && Object.keys(selector).length > 0) {
      const name = `kwok-${Object.entries(selector)
        .map(([k, v]) => `${k}-${v}`)
        .join("-")
        .replace(/[^a-z0-9-]/g, "-")}`.slice(0, 63);
      await objects
        .create(fakeNode(name, { ...selector, "topology.kubernetes.io/zone": "zone-a" }))
        .catch(ignoreExisting);
    }
    const priority = owner.spec?.template?.spec?.priorityClassName;
    if (priority)
      await objects
        .create({
          apiVersion: "scheduling.k8s.io/v1",
          kind: "PriorityClass",
          metadata: { name: priority },
          value: 1000,
        } as KubernetesObject)
        .catch(ignoreExisting);
    const claims = [
      ...(owner.spec?.volumeClaimTemplates ?? []).map((t) => t.spec ?? {}),
      ...(owner.kind === "PersistentVolumeClaim" ? [owner.spec ?? {}] : []),
    ];
    for (const claim of claims) {
      const storageClass = claim.storageClassName;
      if (!storageClass || storageClass === "kwok-volume") continue;
      await objects
        .create({
          apiVersion: "storage.k8s.io/v1",
          kind: "StorageClass",
          metadata: { name: storageClass },
          provisioner: "kubernetes.io/no-provisioner",
          volumeBindingMode: "Immediate",
        } as KubernetesObject)
        .catch(ignoreExisting);
      volumeCount += 1;
      await objects.create({
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: { name: `static-${storageClass}-${volumeCount}` },
        spec: {
          storageClassName: storageClass,
          capacity: { storage: claim.resources?.requests?.storage ?? "1Gi" },
          accessModes: ["ReadWriteOnce"],
          hostPath: { path: `/tmp/entryway-static-${volumeCount}` },
        },
      } as KubernetesObject);
    }
  }
}
let volumeCount = 0;

function ignoreExisting(error: unknown): void {
  if ((error as { code?: number }).code !== 409) throw error;
}

/** Everything a scenario needs to exist before its install. */
async function prepare(rendered: KubernetesObject[]): Promise<void> {
  for (const ns of namespacesOf(rendered)) await ensureNamespace(ns);
  await makeExistingClaims(rendered);
  await makeClusterPrerequisites(rendered as PodSpecOwner[]);
}

/** Everything labelled with the release, in every namespace and at cluster scope. */
async function releaseObjects(release: string, rendered: KubernetesObject[]): Promise<string[]> {
  const kinds = [...new Map(rendered.map((o) => [`${o.apiVersion} ${o.kind}`, o])).values()];
  const left: string[] = [];
  for (const kind of [
    ...kinds,
    { apiVersion: "v1", kind: "PersistentVolumeClaim" },
    { apiVersion: "v1", kind: "Pod" },
  ]) {
    const list = await objects.list(
      kind.apiVersion!,
      kind.kind!,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      `app.kubernetes.io/instance=${release}`,
    );
    for (const item of list.items)
      left.push(`${item.kind ?? kind.kind}/${item.metadata?.namespace ?? ""}/${item.metadata?.name}`);
  }
  return left;
}

/**
 * The chart installed as release `release` into `namespace` (made if missing) with `valuesFiles`
 * and `set`, after what its rendering needs exists (prepare); `helm install --wait`. Resolves to
 * the objects `helm template` renders for the same release.
 */
async function installed(
  h: Helm,
  release: string,
  namespace: string,
  valuesFiles: string[],
  set: string[],
): Promise<KubernetesObject[]> {
  await ensureNamespace(namespace);
  const rendered = helmTemplate(h, chart, { valuesFiles, set, releaseName: release, namespace }) as KubernetesObject[];
  await prepare(rendered);
  const values = [...valuesFiles.flatMap((f) => ["-f", f]), ...set.flatMap((s) => ["--set", s])];
  await helm(h, ["install", release, chart, "-n", namespace, ...values, "--wait", "--timeout", "3m"]);
  return rendered;
}

/** A short release name per scenario and Helm major: object names stay well under 63 characters. */
function releaseName(h: Helm, scenario: string): string {
  return `h${h.major}-${scenarios.indexOf(scenario)}`;
}

describe.each(helmBinaries().map((h) => [`helm ${h.major}`, h] as const))(
  "the chart on the real API server, %s",
  (_label, h) => {
    // Each scenario in a release and namespace of its own, all at once: helm mostly waits on the
    // API server and the controllers, and one at a time would take most of CI's budget.
    it("every ci/ scenario: install --wait, then uninstall leaves nothing", async () => {
      const outcomes = await Promise.all(
        scenarios.map(async (scenario) => {
          const name = path.basename(scenario, ".yaml");
          try {
            const release = releaseName(h, scenario);
            const namespace = `${release}-ns`;
            const rendered = await installed(h, release, namespace, [scenario], NO_LOAD_BALANCER);
            const inCluster = await releaseObjects(release, rendered);
            const expected = rendered
              .filter((o) => o.metadata?.labels?.["app.kubernetes.io/instance"] === release)
              .map((o) => `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`);
            const missing = expected.filter((key) => !inCluster.includes(key));
            await helm(h, ["uninstall", release, "-n", namespace, "--wait", "--timeout", "3m"]);
            // A StatefulSet's volumeClaimTemplates outlive it (persistentVolumeClaimRetentionPolicy
            // whenDeleted defaults to Retain: kubernetes.io/docs/concepts/workloads/controllers/statefulset,
            // "PersistentVolumeClaim retention"): homes and databases are kept on purpose, nothing else.
            // Pods go after their controllers, through the garbage collector: a minute at most.
            const kept = (key: string) => key.startsWith("PersistentVolumeClaim/");
            let left = await releaseObjects(release, rendered);
            for (let i = 0; i < 120 && left.some((key) => !kept(key)); i++) {
              await new Promise((r) => setTimeout(r, 500));
              left = await releaseObjects(release, rendered);
            }
            const leftBehind = left.filter((key) => !kept(key));
            for (const key of left.filter(kept)) {
              const [, ns, claim] = key.split("/");
              await objects
                .delete({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { namespace: ns, name: claim! } })
                .catch((error: { code?: number }) => {
                  if (error.code !== 404) throw error;
                });
            }
            return { name, objects: expected.length, missing, leftBehind };
          } catch (error) {
            return {
              name,
              objects: 0,
              missing: [],
              leftBehind: [],
              error: `${(error as Error).message} ${(error as { body?: string }).body ?? ""}`,
            };
          }
        }),
      );
      console.log(
        `helm ${h.major} on the real API server:\n${outcomes.map((o) => `  ${o.error ? "FAILED" : "ok    "} ${o.name}: ${o.objects} objects${o.error ? `: ${o.error.slice(0, 300)}` : ""}`).join("\n")}`,
      );
      expect(outcomes.filter((o) => o.error || o.missing.length || o.leftBehind.length)).toEqual([]);
      expect(outcomes.reduce((sum, o) => sum + o.objects, 0)).toBeGreaterThan(100);
    });

    it("upgrade with one exec gateway setting changed rolls the exec gateway only", async () => {
      const valuesFiles = ["exec-gateway-kubernetes.yaml", "ansibleforms-sidecar.yaml"].map((f) =>
        path.join(chart, "ci", f),
      );
      const release = `h${h.major}-upgrade`;
      const namespace = `${release}-ns`;
      await installed(h, release, namespace, valuesFiles, NO_LOAD_BALANCER);
      const values = [...valuesFiles.flatMap((f) => ["-f", f]), ...NO_LOAD_BALANCER.flatMap((s) => ["--set", s])];
      const generations = async () => {
        const deployments = (await objects.list("apps/v1", "Deployment", namespace)).items.map((w) => [
          `Deployment/${w.metadata!.name}`,
          w.metadata!.generation,
        ]);
        const statefulSets = (await objects.list("apps/v1", "StatefulSet", namespace)).items.map((w) => [
          `StatefulSet/${w.metadata!.name}`,
          w.metadata!.generation,
        ]);
        return Object.fromEntries([...deployments, ...statefulSets]);
      };
      const before = await generations();
      expect(Object.keys(before).length).toBeGreaterThan(1);
      await helm(h, [
        "upgrade",
        release,
        chart,
        "-n",
        namespace,
        ...values,
        "--set",
        "execGateway.settings.idleTimeoutMs=600000",
        "--wait",
        "--timeout",
        "3m",
      ]);
      const after = await generations();
      const rolled = Object.keys(after).filter((key) => after[key] !== before[key]);
      expect(rolled).toEqual([expect.stringMatching(/^Deployment\/.*exec-gateway$/)]);
      await helm(h, ["uninstall", release, "-n", namespace, "--wait"]);
    });

    it("RBAC of the exec gateway (debug containers) and the TLS CONNECT gateway, decided by the real authorizer", async () => {
      const release = `h${h.major}-rbac`;
      const namespace = `${release}-ns`;
      const valuesFiles = ["exec-gateway-debug.yaml", "ssh-tls.yaml"].map((f) => path.join(chart, "ci", f));
      // Exec through Roles in the target namespaces (the scenario's clusterWide ClusterRole, on purpose, allows it everywhere).
      const rendered = await installed(h, release, namespace, valuesFiles, [
        ...NO_LOAD_BALANCER,
        "execGateway.clusterWide=false",
      ]);
      const roleNamespaces = rendered
        .filter((o) => o.kind === "Role" && o.metadata?.name?.includes("exec-gateway"))
        .map((o) => o.metadata!.namespace!);
      const connectNamespace = rendered.find(
        (o) => o.kind === "ServiceAccount" && o.metadata?.labels?.["app.kubernetes.io/name"] === "connect-gateway",
      )!.metadata!.namespace!;
      await expectRbacAsDeployed(kubeconfig, {
        frontEnd: `Helm ${h.major}, ${valuesFiles.map((f) => path.basename(f)).join(" + ")}`,
        gatewayNamespace: namespace,
        targetNamespaces: roleNamespaces,
        connectNamespace,
        stackNamespaces: [...new Set([namespace, connectNamespace])],
        debugContainers: true,
        kubernetesAuthorizer: true,
        connectTls: true,
      });
      await helm(h, ["uninstall", release, "-n", namespace, "--wait"]);
    });
  },
);
