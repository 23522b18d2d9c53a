/**
 * A cluster's own services on the real node (testkit/harness/node.ts), each from its real binary
 * (scripts/realcp) in an image made here (cluster-images.ts):
 *
 * - startClusterDns: CoreDNS as the cluster DNS, with the objects kubeadm v1.37.2 creates for it
 *   (k8s.io/kubernetes cmd/kubeadm/app/phases/addons/dns/manifests.go: ServiceAccount `coredns`,
 *   ClusterRole and ClusterRoleBinding `system:coredns`, ConfigMap `coredns` with kubeadm's
 *   Corefile, Deployment `coredns`, Service `kube-dns` in kube-system) at kubeadm's address, the
 *   tenth of the Service range (cmd/kubeadm/app/constants/constants.go GetDNSIP): CLUSTER_DNS_IP,
 *   which the node must be started with (`startNode(controlPlane, { clusterDns: CLUSTER_DNS_IP })`).
 * - startNetworkPolicies: kube-network-policies v0.8.0 as the DaemonSet of its install.yaml (in the
 *   module sigs.k8s.io/kube-network-policies@v0.8.0), so NetworkPolicies drop packets on the node.
 *
 * Both import their image into the node, create their objects through the API server, and resolve
 * once the service works; the objects go with the control plane (nothing to stop).
 */
import { BUSYBOX_IMAGE } from "./node-images";
import { coreDnsImage, networkPolicyImage } from "./cluster-images";
import type { NodeControlPlane, RealNode } from "./node";

/** The cluster DNS Service's address: kubeadm's, the tenth of the control plane's 10.96.0.0/16. */
export const CLUSTER_DNS_IP = "10.96.0.10";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const COLLECTIONS: Record<string, string> = {
  ServiceAccount: "/api/v1/namespaces/kube-system/serviceaccounts",
  ConfigMap: "/api/v1/namespaces/kube-system/configmaps",
  Service: "/api/v1/namespaces/kube-system/services",
  Pod: "/api/v1/namespaces/kube-system/pods",
  Deployment: "/apis/apps/v1/namespaces/kube-system/deployments",
  DaemonSet: "/apis/apps/v1/namespaces/kube-system/daemonsets",
  ClusterRole: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
  ClusterRoleBinding: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
};

async function create(controlPlane: NodeControlPlane, objects: Json[]): Promise<void> {
  for (const object of objects) {
    const created = await controlPlane.request("POST", COLLECTIONS[object.kind as string]!, object);
    if (created.status !== 201)
      throw new Error(`the API server refused ${object.kind} ${object.metadata.name}: ${created.body}`);
  }
}

async function get(controlPlane: NodeControlPlane, url: string): Promise<Json> {
  const read = await controlPlane.request("GET", url);
  if (read.status !== 200) throw new Error(`GET ${url}: ${read.status} ${read.body}`);
  return JSON.parse(read.body) as Json;
}

/** A finding that ends a wait at once. */
class Refusal extends Error {}

/** Polls `check` (a falsy answer or a throw other than a Refusal is "not yet") every 500 ms; fails with `diagnose()` after timeoutMs. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  diagnose: () => Promise<string>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    try {
      const answer = await check();
      if (answer) return answer;
    } catch (error) {
      if (error instanceof Refusal) throw error;
      last = (error as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? ` (last: ${last})` : ""}\n${await diagnose()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The kube-system pods with this label selector, their status and the log of each container (for failures). */
async function podReport(controlPlane: NodeControlPlane, node: RealNode, selector: string): Promise<string> {
  const pods = (
    await get(controlPlane, `/api/v1/namespaces/kube-system/pods?labelSelector=${encodeURIComponent(selector)}`)
  ).items as Json[];
  const lines: string[] = [];
  for (const pod of pods) {
    lines.push(`--- pod ${pod.metadata.name}: ${JSON.stringify(pod.status)}`);
    const log = await controlPlane.request(
      "GET",
      `/api/v1/namespaces/kube-system/pods/${pod.metadata.name}/log?tailLines=30`,
    );
    lines.push(log.body);
  }
  lines.push(`--- kubelet\n${node.tail("kubelet", 20)}`);
  return lines.join("\n");
}

/** The addresses busybox `nslookup` printed for `name` (its lines `Name: <name>` then `Address: <ip>`). */
export function resolvedAddresses(nslookupOutput: string, name: string): string[] {
  const addresses: string[] = [];
  let current = "";
  for (const line of nslookupOutput.split("\n")) {
    const named = /^Name:\s*(\S+)/.exec(line);
    if (named) current = named[1]!;
    const address = /^Address(?: \d+)?:\s*([0-9a-f.:]+)$/.exec(line.trim());
    if (address && current === name) addresses.push(address[1]!);
  }
  return addresses;
}

/** A pod spec's security settings that pass Pod Security `restricted`, for the given user. */
/** A ClusterRole `name` with `rules`, bound to the ServiceAccount `serviceAccount` of kube-system. */
function clusterRoleFor(name: string, serviceAccount: string, rules: Json[]): Json[] {
  return [
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace: "kube-system" }],
    },
  ];
}

function restricted(user: number): { pod: Json; container: Json } {
  return {
    pod: { runAsNonRoot: true, runAsUser: user, runAsGroup: user, seccompProfile: { type: "RuntimeDefault" } },
    container: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
  };
}

/**
 * CoreDNS as the cluster DNS (one replica; kubeadm runs two): imports its image, creates kubeadm's
 * objects, waits until its pod is Ready and a pod on the node resolves
 * `kubernetes.default.svc.cluster.local` to the `kubernetes` Service's IP through CLUSTER_DNS_IP.
 * The node must have been started with `clusterDns: CLUSTER_DNS_IP`. Resolves to how long it took (s).
 */
export async function startClusterDns(controlPlane: NodeControlPlane, node: RealNode): Promise<number> {
  const started = performance.now();
  const image = await coreDnsImage();
  await node.importImages([image.archive]);
  const labels = { "k8s-app": "kube-dns" };
  const security = restricted(65532);
  // kubeadm's manifests (manifests.go at v1.37.2), with: this image (never pulled), one replica,
  // and a restricted security context. kubeadm's container context is kept (no privilege
  // escalation, read-only root, every capability dropped but NET_BIND_SERVICE); the image's binary
  // has no file capability (cluster-images.ts), so the non-root process binds port 53 by the pod
  // sysctl net.ipv4.ip_unprivileged_port_start, a "safe" sysctl that Pod Security's `restricted`
  // allows (as istio's gateway injection template sets it to 0 for its gateways).
  await create(controlPlane, [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: "kube-system" } },
    ...clusterRoleFor("system:coredns", "coredns", [
      { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
    ]),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns", namespace: "kube-system" },
      data: {
        Corefile: [
          ".:53 {",
          "    errors",
          "    health {",
          "       lameduck 5s",
          "    }",
          "    ready",
          "    kubernetes cluster.local in-addr.arpa ip6.arpa {",
          "       pods insecure",
          "       fallthrough in-addr.arpa ip6.arpa",
          "       ttl 30",
          "    }",
          "    prometheus :9153",
          "    forward . /etc/resolv.conf {",
          "       max_concurrent 1000",
          "    }",
          "    cache 30 {",
          "       disable success cluster.local",
          "       disable denial cluster.local",
          "    }",
          "    loop",
          "    reload",
          "    loadbalance",
          "}",
          "",
        ].join("\n"),
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "coredns", namespace: "kube-system", labels },
      spec: {
        replicas: 1,
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            priorityClassName: "system-cluster-critical",
            serviceAccountName: "coredns",
            tolerations: [
              { key: "CriticalAddonsOnly", operator: "Exists" },
              { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" },
            ],
            nodeSelector: { "kubernetes.io/os": "linux" },
            securityContext: {
              ...security.pod,
              sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "53" }],
            },
            containers: [
              {
                name: "coredns",
                image: image.name,
                imagePullPolicy: "IfNotPresent",
                resources: { limits: { memory: "170Mi" }, requests: { cpu: "100m", memory: "70Mi" } },
                args: ["-conf", "/etc/coredns/Corefile"],
                volumeMounts: [{ name: "config-volume", mountPath: "/etc/coredns", readOnly: true }],
                ports: [
                  { containerPort: 53, name: "dns", protocol: "UDP" },
                  { containerPort: 53, name: "dns-tcp", protocol: "TCP" },
                  { containerPort: 9153, name: "metrics", protocol: "TCP" },
                  { containerPort: 8080, name: "liveness-probe", protocol: "TCP" },
                  { containerPort: 8181, name: "readiness-probe", protocol: "TCP" },
                ],
                livenessProbe: {
                  httpGet: { path: "/health", port: "liveness-probe", scheme: "HTTP" },
                  initialDelaySeconds: 60,
                  timeoutSeconds: 5,
                  successThreshold: 1,
                  failureThreshold: 5,
                },
                readinessProbe: {
                  httpGet: { path: "/ready", port: "readiness-probe", scheme: "HTTP" },
                  periodSeconds: 1,
                },
                securityContext: { ...security.container, capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] } },
              },
            ],
            dnsPolicy: "Default",
            volumes: [
              { name: "config-volume", configMap: { name: "coredns", items: [{ key: "Corefile", path: "Corefile" }] } },
            ],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "kube-dns",
        namespace: "kube-system",
        labels: { "k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS" },
        annotations: { "prometheus.io/port": "9153", "prometheus.io/scrape": "true" },
      },
      spec: {
        clusterIP: CLUSTER_DNS_IP,
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
          { name: "metrics", port: 9153, protocol: "TCP", targetPort: 9153 },
        ],
        selector: labels,
      },
    },
  ]);
  const report = () => podReport(controlPlane, node, "k8s-app=kube-dns");
  await until(
    "CoreDNS Ready",
    async () =>
      ((await get(controlPlane, "/apis/apps/v1/namespaces/kube-system/deployments/coredns")).status?.readyReplicas ??
        0) >= 1,
    report,
  );

  // A pod of the node (dnsPolicy ClusterFirst: the kubelet's clusterDNS as its nameserver) resolves
  // the `kubernetes` Service's name; it asks until CoreDNS answers (kube-proxy's rules for the new
  // Service may lag its Ready pod by a sync).
  const check = "coredns-check";
  const name = "kubernetes.default.svc.cluster.local";
  const checkSecurity = restricted(1000);
  await create(controlPlane, [
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: check, namespace: "kube-system", labels: { app: check } },
      spec: {
        restartPolicy: "Never",
        securityContext: checkSecurity.pod,
        terminationGracePeriodSeconds: 0,
        containers: [
          {
            name: "nslookup",
            image: BUSYBOX_IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: ["sh", "-c", `for i in $(seq 240); do nslookup ${name} && exit 0; sleep 0.5; done; exit 1`],
            securityContext: checkSecurity.container,
          },
        ],
      },
    },
  ]);
  const phase = await until(
    "a pod resolving kubernetes.default.svc.cluster.local",
    async () => {
      const pod = await get(controlPlane, `/api/v1/namespaces/kube-system/pods/${check}`);
      return ["Succeeded", "Failed"].includes(pod.status?.phase as string) && (pod.status.phase as string);
    },
    async () => `${await podReport(controlPlane, node, `app=${check}`)}\n${await report()}`,
    180_000,
  );
  const log = (await controlPlane.request("GET", `/api/v1/namespaces/kube-system/pods/${check}/log`)).body;
  await controlPlane.request("DELETE", `/api/v1/namespaces/kube-system/pods/${check}`);
  if (phase !== "Succeeded" || !resolvedAddresses(log, name).includes("10.96.0.1"))
    throw new Error(`a pod could not resolve ${name} through CoreDNS (${phase}):\n${log}\n${await report()}`);
  return (performance.now() - started) / 1000;
}

/** The NFQUEUE kube-network-policies reads verdicts from (install.yaml's --nfqueue-id). */
const NFQUEUE = 98;

/**
 * kube-network-policies as the DaemonSet of its install.yaml (v0.8.0), with: this image; the
 * node's name given (--hostname-override from the downward API, as there); --disable-nri, since
 * containerd here has no NRI socket, and so without install.yaml's hostPath volumes /var/run/nri
 * and /var/run/netns, which only its NRI plugin reads (pkg/networkpolicy/nri.go); NET_ADMIN and
 * nothing else for nftables and its NFQUEUE (not privileged). It runs in the node's network
 * namespace (hostNetwork). Resolves, with how long it took (s), once its queue is bound in the
 * node's namespace (/proc/net/netfilter/nfnetlink_queue) and it logged its nftables sync without
 * an error: from then on a NetworkPolicy's denied packets are dropped.
 */
export async function startNetworkPolicies(controlPlane: NodeControlPlane, node: RealNode): Promise<number> {
  const started = performance.now();
  const image = await networkPolicyImage();
  await node.importImages([image.archive]);
  const labels = { tier: "node", app: "kube-network-policies", "k8s-app": "kube-network-policies" };
  await create(controlPlane, [
    ...clusterRoleFor("kube-network-policies", "kube-network-policies", [
      { apiGroups: [""], resources: ["pods", "namespaces"], verbs: ["list", "watch"] },
      { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: ["list", "watch"] },
    ]),
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "kube-network-policies", namespace: "kube-system" } },
    {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "kube-network-policies", namespace: "kube-system", labels },
      spec: {
        selector: { matchLabels: { app: "kube-network-policies" } },
        template: {
          metadata: { labels },
          spec: {
            hostNetwork: true,
            dnsPolicy: "ClusterFirst",
            nodeSelector: { "kubernetes.io/os": "linux" },
            tolerations: [{ operator: "Exists", effect: "NoSchedule" }],
            serviceAccountName: "kube-network-policies",
            containers: [
              {
                name: "kube-network-policies",
                image: image.name,
                imagePullPolicy: "IfNotPresent",
                args: [
                  "/bin/netpol",
                  "--hostname-override=$(MY_NODE_NAME)",
                  "--v=2",
                  `--nfqueue-id=${NFQUEUE}`,
                  "--disable-nri",
                ],
                resources: { requests: { cpu: "100m", memory: "50Mi" } },
                securityContext: { capabilities: { add: ["NET_ADMIN"] } },
                env: [{ name: "MY_NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }],
              },
            ],
          },
        },
      },
    },
  ]);
  const selector = "app=kube-network-policies";
  await until(
    "kube-network-policies' nftables rules and NFQUEUE",
    async () => {
      const queues = await node.inNode("cat", ["/proc/net/netfilter/nfnetlink_queue"]);
      // Each line: queue number, the listening port id, ... (net/netfilter/nfnetlink_queue.c seq_show).
      if (!queues.stdout.split("\n").some((line) => line.trim().split(/\s+/)[0] === String(NFQUEUE))) return false;
      const pods = (
        await get(controlPlane, `/api/v1/namespaces/kube-system/pods?labelSelector=${encodeURIComponent(selector)}`)
      ).items as Json[];
      const pod = pods.find((p) => p.spec.nodeName === node.name);
      if (!pod) return false;
      const log = (await controlPlane.request("GET", `/api/v1/namespaces/kube-system/pods/${pod.metadata.name}/log`))
        .body;
      // controller.go syncNFTablesRules: "Syncing nftables rules", and "syncing nftables rules" with the error when the kernel refused them.
      if (/syncing nftables rules.*error/.test(log))
        throw new Refusal(`kube-network-policies could not program nftables:\n${log}`);
      return log.includes("Syncing nftables rules");
    },
    () => podReport(controlPlane, node, selector),
  );
  return (performance.now() - started) / 1000;
}
