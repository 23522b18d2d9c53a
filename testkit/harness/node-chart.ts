/**
 * The chart on a real node (testkit/harness/node.ts), as test/real/real-node.test.ts installs it: the
 * project's images imported into the node's containerd, the upstream CRDs, `helm install` of a
 * release, and the chart's exec gateway as a pod (release `exec`) with the lookups its tests make:
 * its Ready pod, its log, its Service from this machine. Each costly step is made once, on first use.
 */
import { chmodSync, mkdirSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { installUpstreamCrds, type ControlPlane } from "./control-plane";
import { helmBinaries, helmEnv, repoRoot } from "./helm";
import type { RealNode } from "./node";
import { run } from "./process";
import { chartImageArgs, projectImages, type ProjectImage } from "./project-images";
import type { ObjectLike } from "./validate";

/** Whether a pod has the condition Ready=True. */
export const podIsReady = (pod: V1Pod | undefined): boolean =>
  !!pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");

export interface NodeChartNames {
  /** The exec gateway's release namespace (release `exec`). */
  readonly execNamespace: string;
  /** The one namespace the exec gateway may enter. */
  readonly targetNamespace: string;
  /** Printed before the images' line (the suite's name). */
  readonly logPrefix: string;
}

export interface NodeChart {
  /** A pod that is Ready within `timeoutMs`, or an error with its status and the kubelet's last lines. */
  podReady(namespace: string, name: string, timeoutMs?: number): Promise<V1Pod>;
  /** The pod made again after `before` was deleted (the same name, another uid), once it is Ready. */
  podReplaced(before: V1Pod, timeoutMs?: number): Promise<V1Pod>;
  /** The project's two images (built with podman, or from the image cache), imported once. */
  images(): Promise<{ gateway: ProjectImage; workspace: ProjectImage }>;
  /** Istio's and prometheus-operator's CRDs, installed once. */
  upstreamCrds(): Promise<void>;
  /** `helm install <release>` of the chart into `namespace` (made if missing), with `args`. */
  install(release: string, namespace: string, args: string[]): Promise<void>;
  /** The objects a release applied (`helm get manifest`). */
  manifest(release: string, namespace: string): Promise<ObjectLike[]>;
  /**
   * The chart's exec gateway installed as ci/exec-gateway-kubernetes.yaml renders it, once;
   * resolves to the URL of its Service, a ClusterIP reached from the node's network namespace.
   */
  execGateway(): Promise<string>;
  /** The exec gateway's one Ready pod (not `except`, a pod deleted before), with its log when it does not come. */
  gatewayPod(except?: string, timeoutMs?: number): Promise<V1Pod>;
  /** The gateway container's log of an exec gateway pod. */
  gatewayLog(pod: V1Pod): Promise<string>;
  /** A loopback port carried to the exec gateway's Service in the node, once (for clients in this process). */
  gatewayForward(): Promise<number>;
  /**
   * A PersistentVolume `name` without a storage class (a claim without one binds to it: there is no
   * provisioner here), a hostPath folder of the same name under the node's folder.
   */
  hostPathVolume(name: string): Promise<void>;
  /**
   * Every pod of a release, once its StatefulSets' pods are all Ready (their `sshd` container's
   * previous output, through the API server from the kubelet, when they are not in `timeoutMs`).
   */
  statefulPodsReady(release: string, timeoutMs?: number): Promise<V1Pod[]>;
}

const EXEC_SELECTOR = "app.kubernetes.io/name=exec-gateway,app.kubernetes.io/instance=exec";
const memo = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
};

export function nodeChart(
  { controlPlane, node, core }: { controlPlane: ControlPlane; node: RealNode; core: CoreV1Api },
  names: NodeChartNames,
): NodeChart {
  const { execNamespace, targetNamespace, logPrefix } = names;
  const helm = () => helmBinaries()[0]!.path;
  const helmMust = async (args: string[]) => {
    const result = await run(helm(), args, { env: helmEnv(controlPlane.kubeconfig) });
    if (result.status !== 0) throw new Error(`helm ${args.slice(0, 2).join(" ")}: ${result.stderr}`);
    return result.stdout;
  };
  const execService = async () => {
    const service = await core.readNamespacedService({ namespace: execNamespace, name: "exec-exec-gateway" });
    return { ip: service.spec!.clusterIP!, port: service.spec!.ports!.find((p) => p.name === "http")!.port };
  };

  const chart: NodeChart = {
    async podReady(namespace, name, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      let pod: V1Pod | undefined;
      while (Date.now() < deadline) {
        pod = await core.readNamespacedPod({ namespace, name });
        if (podIsReady(pod)) return pod;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(
        `pod ${namespace}/${name} not Ready in ${timeoutMs} ms: ${JSON.stringify(pod?.status)}\n--- kubelet\n${node.tail("kubelet", 30)}`,
      );
    },
    async podReplaced(before, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      const { namespace, name } = before.metadata as { namespace: string; name: string };
      for (;;) {
        const pod = await core.readNamespacedPod({ namespace, name }).catch(() => undefined);
        if (pod && pod.metadata?.uid !== before.metadata?.uid && podIsReady(pod)) return pod;
        if (Date.now() > deadline)
          throw new Error(`pod ${namespace}/${name} did not come back Ready: ${JSON.stringify(pod?.status)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    images: memo(async () => {
      const started = performance.now();
      const { gateway, workspace, built } = await projectImages();
      await node.importImages([gateway.archive, workspace.archive]);
      console.log(
        `${logPrefix}: exec-gateway and ssh-workspace images ${built.length ? `built (${built.join(", ")})` : "from the image cache"} and imported in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
      return { gateway, workspace };
    }),
    upstreamCrds: memo(() => installUpstreamCrds(controlPlane)),
    async install(release, namespace, args) {
      const chartDir = path.join(repoRoot, "charts", "entryway");
      await helmMust(["install", release, chartDir, "-n", namespace, "--create-namespace", ...args]);
    },
    async manifest(release, namespace) {
      return parseAllDocuments(await helmMust(["get", "manifest", release, "-n", namespace]))
        .map((doc) => doc.toJS() as ObjectLike | null)
        .filter((o): o is ObjectLike => o !== null);
    },
    execGateway: memo(async () => {
      // The `kubernetes` backend and authorizer, exposed through Istio, which is not here, with
      // only what the test must change: its image (built here, imported into containerd), the
      // namespace it may enter, one replica (one node; the restart test deletes it).
      const { gateway: image } = await chart.images();
      // The scenario's exposure renders Istio's Gateway and VirtualService: their CRDs must exist.
      await chart.upstreamCrds();
      await chart.install("exec", execNamespace, [
        "-f",
        path.join(repoRoot, "charts", "entryway", "ci", "exec-gateway-kubernetes.yaml"),
        "--set",
        "execGateway.replicas=1",
        "--set",
        `execGateway.targetNamespaces={${targetNamespace}}`,
        // The browser reaches the Service on a loopback port, not at the scenario's public host, so
        // the page's origin is http://127.0.0.1:<port>: with no allowedOrigins the gateway accepts
        // exactly its own origin as the Host header names it, when that is an IP address (server.ts
        // originAllowed). Clients that are not browsers send no Origin.
        "--set-json",
        "execGateway.settings.allowedOrigins=[]",
        ...chartImageArgs("execGateway", image),
      ]);
      await chart.gatewayPod();
      const service = await execService();
      return `ws://${service.ip}:${service.port}`;
    }),
    async gatewayPod(except, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const pods = (
          await core.listNamespacedPod({ namespace: execNamespace, labelSelector: EXEC_SELECTOR })
        ).items.filter((p) => p.metadata?.name !== except && !p.metadata?.deletionTimestamp);
        const ready = pods.find(podIsReady);
        if (ready) return ready;
        if (Date.now() > deadline) {
          const logs = await Promise.all(pods.map((p) => chart.gatewayLog(p).catch((error: unknown) => String(error))));
          throw new Error(
            `no Ready exec gateway pod in ${timeoutMs} ms: ${JSON.stringify(pods.map((p) => p.status))}\n--- the gateway's log\n${logs.join("\n---\n")}\n--- kubelet\n${node.tail("kubelet", 30)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    gatewayLog: (pod) =>
      core.readNamespacedPodLog({ namespace: execNamespace, name: pod.metadata!.name!, container: "gateway" }),
    gatewayForward: memo(async () => {
      await chart.execGateway();
      const service = await execService();
      return (await node.forward(service.ip, service.port)).port;
    }),
    async hostPathVolume(name) {
      // Made as rancher/local-path-provisioner's setup script makes a volume (`mkdir -m 0777`): a
      // hostPath volume gets no fsGroup ownership, and a root-owned home stopped the workspace
      // ("mkdir: cannot create directory '/home/dev/.entryway': Permission denied").
      const dir = path.join(node.dir, name);
      mkdirSync(dir);
      chmodSync(dir, 0o777);
      await core.createPersistentVolume({
        body: {
          metadata: { name },
          spec: {
            storageClassName: "",
            capacity: { storage: "10Gi" },
            accessModes: ["ReadWriteOnce"],
            hostPath: { path: dir, type: "Directory" },
          },
        },
      });
    },
    async statefulPodsReady(release, timeoutMs = 180_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const pods = (await core.listPodForAllNamespaces({ labelSelector: `app.kubernetes.io/instance=${release}` }))
          .items;
        const stateful = pods.filter((p) => p.metadata?.ownerReferences?.some((o) => o.kind === "StatefulSet"));
        if (stateful.length && stateful.every(podIsReady)) return pods;
        if (Date.now() > deadline) {
          const logs = await Promise.all(
            stateful.map((p) =>
              core
                .readNamespacedPodLog({
                  namespace: p.metadata!.namespace!,
                  name: p.metadata!.name!,
                  container: "sshd",
                  previous: true,
                })
                .catch((error: unknown) => String(error)),
            ),
          );
          throw new Error(
            `workspace pods not Ready: ${JSON.stringify(stateful.map((p) => p.status?.containerStatuses))}\n--- sshd's log\n${logs.join("\n---\n")}`,
          );
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    },
  };
  return chart;
}
