/**
 * A cluster to bring an Entryway environment up on, made of real parts only: the control plane
 * (control-plane.ts, no kwok) and one real node (node.ts) with cluster DNS (CoreDNS), a
 * NetworkPolicy implementation that drops packets (kube-network-policies), istiod with its
 * injection webhook (istio-mesh.ts), the images all of them and the project run (imported into
 * containerd: no registry is reachable), and hostPath volumes for the claims StatefulSets make (no
 * provisioner runs here; a claim without a class binds to a volume without one).
 *
 * What a cloud cluster has and this one does not: a load balancer (the CONNECT gateway is reached
 * on its node port) and a default StorageClass (the volumes are made up front).
 */
import { chmodSync, mkdirSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { CoreV1Api, Exec, KubeConfig, type V1Pod, type V1Status } from "@kubernetes/client-node";
import { coreDnsImage, istiodImage, networkPolicyImage, proxyImage } from "./cluster-images";
import { CLUSTER_DNS_IP, startClusterDns, startNetworkPolicies } from "./cluster-services";
import { installUpstreamCrds, startControlPlane, type ControlPlane } from "./control-plane";
import { installIstiod, ISTIO_NAMESPACE } from "./istio-mesh";
import { startNode, type RealNode } from "./node";
import { podIsReady } from "./node-chart";
import { projectImages, type ProjectImage } from "./project-images";
import { startSeaweedFs, type SeaweedFsService } from "./s3-service";

export interface Environment {
  readonly controlPlane: ControlPlane;
  readonly node: RealNode;
  readonly core: CoreV1Api;
  readonly images: { gateway: ProjectImage; workspace: ProjectImage };
  /** SeaweedFS in the cluster (namespace `s3`), its S3 on TLS: where the exec gateway records. */
  readonly s3: SeaweedFsService;
  /** How long each part took to come up (s). */
  readonly timings: Record<string, number>;
  /** Runs a command in a pod's first container through the API server and the kubelet: its exit code and output. */
  exec(namespace: string, pod: string, command: string[]): Promise<{ code: number; stdout: string }>;
  /** Waits until every pod matching `labelSelector` in `namespace` is Ready (at least one). */
  podsReady(namespace: string, labelSelector: string, timeoutMs?: number): Promise<V1Pod[]>;
  stop(): Promise<void>;
}

/**
 * Starts the cluster; `volumes` hostPath PersistentVolumes (10Gi each, no class) are made for
 * claims, and the namespaces `recordingNamespaces` (a stack's own, made here before it) get
 * SeaweedFS's credentials Secret.
 */
export async function startEnvironment(volumes: number, recordingNamespaces: string[]): Promise<Environment> {
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, step: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await step();
    timings[name] = Math.round((performance.now() - started) / 100) / 10;
    return result;
  };
  const controlPlane = await timed("control plane", () => startControlPlane({ kwok: false, endpointRouting: true }));
  let node: RealNode | undefined;
  try {
    node = await timed("node", () => startNode(controlPlane, { clusterDns: CLUSTER_DNS_IP }));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(controlPlane.kubeconfig);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const realNode = node;

    const podsReady = async (namespace: string, labelSelector: string, timeoutMs = 180_000): Promise<V1Pod[]> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const pods = (await core.listNamespacedPod({ namespace, labelSelector })).items.filter(
          (p) => !p.metadata?.deletionTimestamp,
        );
        if (pods.length && pods.every(podIsReady)) return pods;
        if (Date.now() > deadline)
          throw new Error(
            `pods ${labelSelector} in ${namespace} not Ready in ${timeoutMs} ms: ${JSON.stringify(pods.map((p) => ({ name: p.metadata?.name, status: p.status?.containerStatuses ?? p.status?.conditions })))}\n--- kubelet\n${realNode.tail("kubelet", 30)}`,
          );
        await new Promise((r) => setTimeout(r, 500));
      }
    };

    const images = await timed("images", async () => {
      const cluster = await Promise.all([coreDnsImage(), networkPolicyImage(), istiodImage(), proxyImage()]);
      const project = await projectImages();
      await realNode.importImages([
        ...cluster.map((image) => image.archive),
        project.gateway.archive,
        project.workspace.archive,
      ]);
      return { gateway: project.gateway, workspace: project.workspace };
    });
    await timed("cluster DNS and NetworkPolicies", async () => {
      await Promise.all([startClusterDns(controlPlane, realNode), startNetworkPolicies(controlPlane, realNode)]);
    });
    await timed("istiod", async () => {
      // Istio's CRDs come with its base chart, not istio-discovery: istiod watches them, the stack makes them.
      await installUpstreamCrds(controlPlane);
      await installIstiod(controlPlane.kubeconfig);
      await podsReady(ISTIO_NAMESPACE, "app=istiod");
    });

    const s3 = await timed("SeaweedFS", async () => {
      await core.createNamespace({ body: { metadata: { name: "s3" } } });
      for (const name of recordingNamespaces) await core.createNamespace({ body: { metadata: { name } } });
      return startSeaweedFs(controlPlane.kubeconfig, realNode, "s3", recordingNamespaces);
    });

    for (let index = 0; index < volumes; index++) {
      // Made as rancher/local-path-provisioner's setup script makes a volume (`mkdir -m 0777`):
      // a hostPath volume gets no fsGroup ownership, and the workspace's user must write its home.
      const dir = path.join(realNode.dir, "volumes", `pv-${index}`);
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o777);
      await core.createPersistentVolume({
        body: {
          metadata: { name: `environment-pv-${index}` },
          spec: {
            storageClassName: "",
            capacity: { storage: "10Gi" },
            accessModes: ["ReadWriteOnce"],
            persistentVolumeReclaimPolicy: "Retain",
            hostPath: { path: dir, type: "Directory" },
          },
        },
      });
    }

    const exec = (namespace: string, pod: string, command: string[]) =>
      new Promise<{ code: number; stdout: string }>((resolve, reject) => {
        const chunks: Buffer[] = [];
        const stdout = new Writable({
          write(chunk: Buffer, _encoding, callback) {
            chunks.push(chunk);
            callback();
          },
        });
        // The status the kubelet sends last: Success, or Failure with the exit code as a cause
        // (k8s.io/apimachinery remotecommand, NonZeroExitCode).
        const done = (status: V1Status) => {
          const output = Buffer.concat(chunks).toString();
          if (status.status === "Success") return resolve({ code: 0, stdout: output });
          const code = status.details?.causes?.find((c) => c.reason === "ExitCode")?.message;
          if (code !== undefined) resolve({ code: Number(code), stdout: output });
          else reject(new Error(`exec in ${namespace}/${pod}: ${JSON.stringify(status)}`));
        };
        new Exec(kubeConfig).exec(namespace, pod, "", command, stdout, null, null, false, done).catch(reject);
      });

    return {
      controlPlane,
      node: realNode,
      core,
      images,
      s3,
      timings,
      exec,
      podsReady,
      async stop() {
        await realNode.stop();
        await controlPlane.stop();
      },
    };
  } catch (error) {
    await node?.stop().catch(() => undefined);
    await controlPlane.stop();
    throw error;
  }
}
