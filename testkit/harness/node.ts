/**
 * A real node for the real control plane (testkit/harness/control-plane.ts): kubelet and kube-proxy
 * from the same Kubernetes v1.37.2 build (scripts/realcp/kube), containerd and runc and the CNI
 * plugins (bridge, host-local, loopback) from Debian's packages, and images imported into
 * containerd's `k8s.io` namespace from archives (no registry is reachable).
 *
 * Isolation: the whole node lives in a network namespace of its own (`ewnode-<n>`), joined by a
 * veth pair to this machine (host end 10.246.<n>.1/30, node end 10.246.<n>.2/30, the node's
 * InternalIP). containerd, the kubelet and kube-proxy run with `nsenter --net` (only the network
 * namespace: they must share the machine's mount namespace, since containerd mounts what the
 * kubelet prepared). So kube-proxy's iptables rules, the pod bridge, the forwarding and NAT
 * settings are the node's own and vanish with its namespace; the machine's own tables are never
 * touched. Pods get 10.245.<n>.0/24 on the node's bridge and reach the machine through the node's
 * masquerade; the machine reaches them by one route of its own (10.245.<n>.0/24 via the node's IP,
 * removed by stop()), as a control plane reaches pod IPs. With the option `clusterDns`, the kubelet
 * gives pods that Service IP as their nameserver (CoreDNS: testkit/harness/cluster-services.ts).
 *
 * The API server listens on 127.0.0.1 only; the node reaches it through a relay in this process on
 * the host end of the veth, port 6443 (kubeadm's; policies that admit egress to the API server by
 * its usual ports, as the exec gateway's does, see the port after kube-proxy's DNAT), with `tls-server-name: localhost` (a name the server's
 * certificate holds). The `kubernetes` Service (10.96.0.1:443, also in that certificate) gets an
 * EndpointSlice to the relay, so pods reach the API server as on any cluster (the control plane runs
 * with --endpoint-reconciler-type=none). The API server dials the kubelet at the node's InternalIP
 * with its kubelet client certificate (system:masters); the kubelet authenticates it by x509 and
 * authorizes by webhook (a SubjectAccessReview), as kubeadm sets a kubelet up.
 *
 * Everything is removed by stop(): pods' containers and sandboxes, containerd's shims, every mount
 * under the node's folder, the pod cgroups (under a cgroup root of the node's own), the network
 * namespace (and with it the veth, the bridge and kube-proxy's rules), the route to the pods, CNI's
 * cache files.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import os from "node:os";
import path from "node:path";
import { issue, nodeReady, stopChild, waitFor, writeKubeconfig, type Started } from "./control-plane";
import {
  makeCgroupRoot,
  missingNodeTools,
  mountsUnder,
  pickNumber,
  processesWhere,
  removeCgroupRoot,
} from "./node-host";
import { must, run } from "./process";
import { realTool } from "./realcp-tool";
import { PAUSE_IMAGE, smallImages } from "./node-images";

export interface NodeControlPlane {
  readonly dir: string;
  readonly server: string;
  request(method: string, url: string, body?: unknown): Promise<{ status: number; body: string }>;
}

export interface RealNode {
  readonly name: string;
  /** The node's InternalIP (in its own network namespace). */
  readonly ip: string;
  /** This machine's end of the veth: its address, and the link's name. */
  readonly hostIp: string;
  readonly hostLink: string;
  /** The pods' addresses; this machine routes them via the node's IP (so processes here reach pod IPs). */
  readonly podCidr: string;
  readonly netns: string;
  readonly dir: string;
  /** Runs ctr against the node's containerd in the `k8s.io` namespace. */
  ctr(...args: string[]): Promise<string>;
  /** Runs a command in the node's network namespace (only). */
  inNode(command: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }>;
  /**
   * A port on this machine's loopback whose every connection is carried into the node's network
   * namespace to host:port (busybox nc under nsenter): a ClusterIP works there, through
   * kube-proxy's rules. Closed by stop() at the latest.
   */
  forward(host: string, port: number): Promise<{ port: number; close(): Promise<void> }>;
  /** Imports image archives (OCI or docker archive) into containerd's `k8s.io` namespace. */
  importImages(archives: string[]): Promise<void>;
  /** The last lines of a process's log (containerd, kubelet, kube-proxy). */
  tail(name: string, lines?: number): string;
  /** Removes everything the node made; returns each step's time (ms). */
  stop(): Promise<Record<string, number>>;
}

/** The API server's port as the node and its pods reach it (the relay's): kubeadm's default. */
const RELAY_PORT = 6443;

export interface NodeOptions {
  /**
   * The cluster DNS Service's IP (e.g. CLUSTER_DNS_IP of cluster-services.ts, where
   * startClusterDns puts CoreDNS): the kubelet's `clusterDNS`, so pods with dnsPolicy ClusterFirst
   * (the default) get it as their nameserver with the cluster's search domains. Without it pods get
   * this machine's resolv.conf and no cluster names resolve.
   */
  readonly clusterDns?: string;
}

export async function startNode(controlPlane: NodeControlPlane, options: NodeOptions = {}): Promise<RealNode> {
  const missing = missingNodeTools();
  if (missing.length) throw new Error(`the real node needs ${missing.join(", ")} (see .ci/apt-packages.txt)`);
  const kubeBin = realTool("kube");
  const n = pickNumber();
  const name = `entryway-node-${n}`;
  const netns = `ewnode-${n}`;
  const hostLink = `ewnode${n}`;
  const hostIp = `10.246.${n}.1`;
  const ip = `10.246.${n}.2`;
  const podCidr = `10.245.${n}.0/24`;
  const cgroupRoot = `/entryway-node-${n}`;
  const cniNetwork = `entryway-node-${n}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-node-"));
  const sock = path.join(dir, "containerd.sock");
  const started: Started[] = [];
  const cleanups: { name: string; run: () => Promise<void> | void }[] = [];
  const atStop = (name: string, run: () => Promise<void> | void) => cleanups.push({ name, run });
  const logOf = (processName: string) => path.join(dir, `${processName}.log`);
  const tail = (processName: string, lines = 20) => {
    try {
      return readFileSync(logOf(processName), "utf8").trim().split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  };
  const inNode = (command: string, args: string[]) =>
    run("nsenter", [`--net=/run/netns/${netns}`, "--", command, ...args]);
  const mustInNode = async (command: string, args: string[]) => {
    const result = await inNode(command, args);
    if (result.status !== 0)
      throw new Error(
        `in the node's network namespace: ${command} ${args.join(" ")} exited ${result.status}: ${result.stderr.trim()}`,
      );
    return result.stdout;
  };
  const startInNode = (processName: string, command: string, args: string[]) => {
    const log = createWriteStream(logOf(processName));
    const child = spawn("nsenter", [`--net=/run/netns/${netns}`, "--", command, ...args], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    started.push({ name: processName, child });
    return child;
  };
  const ctr = (...args: string[]) => must("ctr", ["--address", sock, "--namespace", "k8s.io", ...args]);

  const stopProcess = (processName: string) => {
    const entry = started.find((s) => s.name === processName);
    return entry ? stopChild(entry.child) : Promise.resolve();
  };

  /** Runs every cleanup, last registered first; returns how long each took (ms). */
  async function stop(): Promise<Record<string, number>> {
    const errors: string[] = [];
    const times: Record<string, number> = {};
    for (const { name: step, run: cleanup } of cleanups.reverse()) {
      const begun = performance.now();
      try {
        await cleanup();
      } catch (error) {
        errors.push(`${step}: ${(error as Error).message}`);
      }
      times[step] = Math.round(performance.now() - begun);
    }
    cleanups.length = 0;
    if (errors.length) throw new Error(`the node's cleanup left something behind:\n${errors.join("\n")}`);
    return times;
  }

  try {
    // Cleanups run last-pushed first: the folder goes last of all.
    atStop("folder", () => {
      if (!process.env.ENTRYWAY_KEEP_NODE) rmSync(dir, { recursive: true, force: true });
    });
    // --- the network namespace and its link to this machine
    await must("ip", ["netns", "add", netns]);
    atStop("network namespace", async () => {
      await must("ip", ["netns", "delete", netns]);
      // The veth's host end goes with the namespace its other end is in, but later: `ip netns delete`
      // only drops a reference, and the kernel tears the namespace down from a workqueue
      // (net/core/net_namespace.c, cleanup_net). Wait for that; delete the link only if it outlives
      // the wait (a check then a delete could race the kernel: "Cannot find device").
      const hostLinkExists = () => existsSync(`/sys/class/net/${hostLink}`);
      for (let waited = 0; hostLinkExists() && waited < 10_000; waited += 100) await sleep(100);
      if (hostLinkExists()) {
        const deleted = await run("ip", ["link", "delete", hostLink]);
        if (deleted.status !== 0 && hostLinkExists()) throw new Error(`ip link delete ${hostLink}: ${deleted.stderr}`);
      }
    });
    await must("ip", ["link", "add", hostLink, "type", "veth", "peer", "name", "eth0", "netns", netns]);
    await must("ip", ["addr", "add", `${hostIp}/30`, "dev", hostLink]);
    await must("ip", ["link", "set", hostLink, "up"]);
    for (const args of [
      ["link", "set", "lo", "up"],
      ["addr", "add", `${ip}/30`, "dev", "eth0"],
      ["link", "set", "eth0", "up"],
      ["route", "add", "default", "via", hostIp],
    ]) {
      await mustInNode("ip", args);
    }
    // Routing between the pods' bridge and the veth, bridged traffic through iptables (kube-proxy's
    // Service rules for pod-to-pod through a Service on the same bridge), and the pods' traffic
    // to this machine leaving as the node's address: all settings of the node's namespace only.
    await mustInNode("sh", [
      "-c",
      "echo 1 > /proc/sys/net/ipv4/ip_forward && echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables",
    ]);
    await mustInNode("iptables", ["-t", "nat", "-A", "POSTROUTING", "-s", podCidr, "-o", "eth0", "-j", "MASQUERADE"]);
    // This machine reaches the pods through the node, as a cluster's control plane reaches pod IPs
    // (the API server's pods/proxy and services/proxy, an admission webhook behind a Service): the
    // node's namespace forwards, and the pods' replies go back by its route to the veth.
    await must("ip", ["route", "add", podCidr, "via", ip, "dev", hostLink]);
    atStop("route to the pods", async () => {
      const deleted = await run("ip", ["route", "delete", podCidr, "via", ip, "dev", hostLink]);
      // Gone already if the veth went first.
      if (deleted.status !== 0 && (await run("ip", ["route", "show", podCidr])).stdout.trim())
        throw new Error(`ip route delete ${podCidr}: ${deleted.stderr}`);
    });

    // --- the relay to the API server
    const apiPort = Number(new URL(controlPlane.server).port);
    const relayed = new Set<net.Socket>();
    const relay = net.createServer((downstream) => {
      const upstream = net.connect({ host: "127.0.0.1", port: apiPort });
      relayed.add(downstream).add(upstream);
      downstream.pipe(upstream).pipe(downstream);
      const close = () => {
        downstream.destroy();
        upstream.destroy();
        relayed.delete(downstream);
        relayed.delete(upstream);
      };
      downstream.on("error", close);
      upstream.on("error", close);
      downstream.on("close", close);
      upstream.on("close", close);
    });
    await new Promise<void>((resolve, reject) => {
      relay.once("error", reject);
      relay.listen(RELAY_PORT, hostIp, resolve);
    });
    atStop(
      "API relay",
      () =>
        new Promise<void>((resolve) => {
          relay.close(() => resolve());
          for (const socket of relayed) socket.destroy();
        }),
    );
    const nodeServer = `https://${hostIp}:${RELAY_PORT}`;

    // --- credentials: the kubelet as its node (Node authorizer, NodeRestriction), kube-proxy as
    // the user the bootstrap policy binds to system:node-proxier
    issue(
      controlPlane.dir,
      `node-${n}-kubelet`,
      `/O=system:nodes/CN=system:node:${name}`,
      "extendedKeyUsage=clientAuth\n",
    );
    issue(controlPlane.dir, `node-${n}-kube-proxy`, "/CN=system:kube-proxy", "extendedKeyUsage=clientAuth\n");
    const kubeletKubeconfig = writeKubeconfig(controlPlane.dir, `node-${n}-kubelet`, nodeServer, "localhost");
    const proxyKubeconfig = writeKubeconfig(controlPlane.dir, `node-${n}-kube-proxy`, nodeServer, "localhost");

    // --- the `kubernetes` Service's endpoint: the relay
    const slice = await controlPlane.request("POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: `kubernetes-${name}`,
        labels: {
          "kubernetes.io/service-name": "kubernetes",
          "endpointslice.kubernetes.io/managed-by": "entryway-test-node",
        },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: [hostIp], conditions: { ready: true } }],
      ports: [{ name: "https", port: RELAY_PORT, protocol: "TCP" }],
    });
    if (slice.status !== 201) throw new Error(`the API server refused the kubernetes EndpointSlice: ${slice.body}`);
    atStop("kubernetes EndpointSlice", async () => {
      await controlPlane.request(
        "DELETE",
        `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes-${name}`,
      );
    });

    // --- cgroups: a root of the node's own
    makeCgroupRoot(cgroupRoot);
    atStop("cgroups", () => removeCgroupRoot(cgroupRoot));

    // --- containerd (1.6, Debian bookworm's), its state in the node's folder
    const cniConfDir = path.join(dir, "cni", "net.d");
    mkdirSync(cniConfDir, { recursive: true });
    writeFileSync(
      path.join(dir, "containerd.toml"),
      [
        "version = 2",
        `root = "${path.join(dir, "containerd", "root")}"`,
        `state = "${path.join(dir, "containerd", "state")}"`,
        "[grpc]",
        `  address = "${sock}"`,
        '[plugins."io.containerd.grpc.v1.cri"]',
        `  sandbox_image = "${PAUSE_IMAGE}"`,
        // The pods' network namespaces as files under the state folder, not /var/run/netns
        // (containerd docs/cri/config.md, netns_mounts_under_state_dir).
        "  netns_mounts_under_state_dir = true",
        // The kubelet asks for oom_score_adj -998 for sandboxes (and -997 for Guaranteed pods); a
        // process may lower its own only with CAP_SYS_RESOURCE, which this machine's sandbox does
        // not grant even to root (CapEff 000001fffeffffff, bit 24 clear), so runc's nsexec failed
        // every pod with "failed to update /proc/self/oom_score_adj: Permission denied". This
        // option clamps a container's value to containerd's own (CRI PluginConfig
        // RestrictOOMScoreAdj, "restrict_oom_score_adj", as for containerd in a user namespace).
        "  restrict_oom_score_adj = true",
        '[plugins."io.containerd.grpc.v1.cri".cni]',
        '  bin_dir = "/usr/lib/cni"',
        `  conf_dir = "${cniConfDir}"`,
        "",
      ].join("\n"),
    );
    writeFileSync(
      path.join(cniConfDir, "10-entryway-node.conflist"),
      JSON.stringify({
        cniVersion: "1.0.0",
        name: cniNetwork,
        plugins: [
          {
            type: "bridge",
            bridge: "cni0",
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            // host-local keeps its leases in dataDir (default /var/lib/cni/networks): the node's own.
            ipam: {
              type: "host-local",
              dataDir: path.join(dir, "cni", "ipam"),
              ranges: [[{ subnet: podCidr }]],
              routes: [{ dst: "0.0.0.0/0" }],
            },
          },
        ],
      }),
    );
    atStop("mounts and CNI cache", async () => {
      for (const point of mountsUnder(dir)) {
        const result = await run("umount", [point]);
        if (result.status !== 0 && mountsUnder(point).includes(point)) await must("umount", ["--lazy", point]);
      }
      // containerd 1.6 keeps runc's state and the shims' sockets under /run/containerd whatever
      // its own state folder is; each container's entries went with it, the empty folders go now
      // (rmdir leaves a folder another node still uses).
      for (const folder of [
        "/run/containerd/runc/k8s.io",
        "/run/containerd/runc",
        "/run/containerd/s",
        "/run/containerd/fifo",
        "/run/containerd",
      ]) {
        try {
          rmdirSync(folder);
        } catch {
          // not empty, or absent
        }
      }
      const results = "/var/lib/cni/results";
      if (existsSync(results))
        for (const file of readdirSync(results))
          if (file.startsWith(`${cniNetwork}-`)) rmSync(path.join(results, file), { force: true });
    });
    startInNode("containerd", "containerd", ["--config", path.join(dir, "containerd.toml")]);
    atStop("containers and containerd", async () => {
      await removeContainers();
      await stopProcess("containerd");
      killShims();
    });
    await waitFor(
      "containerd's socket",
      async () => (await run("ctr", ["--address", sock, "version"])).status === 0,
      started,
      tail,
      120_000,
    );

    // Containers first (all tasks killed), then their mounts, CNI's cache of this network.
    async function removeContainers(): Promise<void> {
      const k8s = ["--address", sock, "--namespace", "k8s.io"];
      const tasks = (await run("ctr", [...k8s, "tasks", "ls", "-q"])).stdout.split("\n").filter(Boolean);
      // All at once: `tasks delete --force` kills the task (SIGKILL) and deletes it once it stopped.
      await Promise.all(
        tasks.map(async (task) => {
          for (let attempt = 0; attempt < 40; attempt++) {
            if ((await run("ctr", [...k8s, "tasks", "delete", "--force", task])).status === 0) return;
            if (!(await run("ctr", [...k8s, "tasks", "ls", "-q"])).stdout.split("\n").includes(task)) return;
            await new Promise((r) => setTimeout(r, 250));
          }
        }),
      );
      const containers = (await run("ctr", [...k8s, "containers", "ls", "-q"])).stdout.split("\n").filter(Boolean);
      if (containers.length) await run("ctr", [...k8s, "containers", "delete", ...containers]);
    }
    // A shim outlives containerd when its task was not deleted; these are the ones started for
    // this node's socket, found by it.
    function killShims(): void {
      const shims = processesWhere((c) => c.startsWith("/usr/bin/containerd-shim") && c.split("\0").includes(sock));
      for (const pid of shims) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone already
        }
      }
    }

    // --- images: pause and a busybox target
    const imageArchives = await smallImages(dir);
    const importImages = async (archives: string[]) => {
      for (const archive of archives) await ctr("images", "import", archive);
    };
    await importImages(imageArchives);

    // --- the kubelet
    // Fields from k8s.io/kubelet config/v1beta1 (KubeletConfiguration) at v0.37.2.
    const kubeletConfig = {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      // "FailCgroupV1 prevents the kubelet from starting on hosts that use cgroup v1. By default,
      // this is set to 'true'": this machine exposes only cgroup v1 hierarchies (and an empty
      // cgroup2 at /sys/fs/cgroup/unified), so the kubelet must be allowed to run on them.
      failCgroupV1: false,
      // containerd 1.6 does not answer the CRI RuntimeConfig call (containerd added it in 2.0,
      // containerd/containerd#8722); kubelet v1.37 then falls back to this field
      // (cmd/kubelet/app/server.go getCgroupDriverFromCRI: "Falling back to using cgroupDriver
      // from kubelet config"). cgroupfs: there is no systemd here, and containerd's runc runs
      // with SystemdCgroup=false.
      cgroupDriver: "cgroupfs",
      cgroupRoot,
      containerRuntimeEndpoint: `unix://${sock}`,
      address: ip,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      healthzPort: 10248,
      authentication: {
        x509: { clientCAFile: path.join(controlPlane.dir, "ca.crt") },
        webhook: { enabled: true },
        anonymous: { enabled: false },
      },
      authorization: { mode: "Webhook" },
      clusterDomain: "cluster.local",
      ...(options.clusterDns ? { clusterDNS: [options.clusterDns] } : {}),
      podCIDR: podCidr,
      podLogsDir: path.join(dir, "pod-logs"),
      // The machine's resolv.conf: what pods with dnsPolicy Default get (CoreDNS forwards what is
      // not a cluster name there), and every pod's when there is no clusterDNS.
      resolvConf: "/etc/resolv.conf",
      failSwapOn: false,
      // The images were imported, never pulled: the kubelet must not collect them when the
      // machine's disk is fuller than its default 85 %, nor evict pods for a shared disk.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: {
        "memory.available": "100Mi",
        "nodefs.available": "1%",
        "imagefs.available": "1%",
        "nodefs.inodesFree": "1%",
      },
      registerNode: true,
      rotateCertificates: false,
      serializeImagePulls: false,
      syncFrequency: "5s",
      fileCheckFrequency: "5s",
      nodeStatusUpdateFrequency: "5s",
      staticPodPath: "",
      enableServer: true,
    };
    writeFileSync(path.join(dir, "kubelet.json"), JSON.stringify(kubeletConfig, null, 2));
    const kubeletRoot = path.join(dir, "kubelet");
    mkdirSync(kubeletRoot);
    atStop("Node object", async () => {
      await controlPlane.request("DELETE", `/api/v1/nodes/${name}`);
    });
    startInNode("kubelet", path.join(kubeBin, "kubelet"), [
      `--config=${path.join(dir, "kubelet.json")}`,
      `--kubeconfig=${kubeletKubeconfig}`,
      `--root-dir=${kubeletRoot}`,
      `--cert-dir=${path.join(kubeletRoot, "pki")}`,
      `--hostname-override=${name}`,
      `--node-ip=${ip}`,
      "--v=1",
    ]);
    atStop("kubelet", () => stopProcess("kubelet"));
    await waitFor(
      `node ${name} Ready`,
      async () => nodeReady((await controlPlane.request("GET", `/api/v1/nodes/${name}`)).body),
      started,
      tail,
      120_000,
    );

    // --- kube-proxy, iptables mode, in the node's namespace
    // Fields from k8s.io/kube-proxy config/v1alpha1 (KubeProxyConfiguration) at v0.37.2.
    writeFileSync(
      path.join(dir, "kube-proxy.json"),
      JSON.stringify({
        apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
        kind: "KubeProxyConfiguration",
        clientConnection: { kubeconfig: proxyKubeconfig },
        mode: "iptables",
        clusterCIDR: podCidr,
        hostnameOverride: name,
        bindAddress: ip,
        healthzBindAddress: "127.0.0.1:10256",
        metricsBindAddress: "127.0.0.1:10249",
        // "maxPerCore ... (0 to leave the limit as-is and ignore min)": nf_conntrack_max is the
        // machine's, not the node namespace's, and stays as found.
        conntrack: { maxPerCore: 0, min: 0 },
      }),
    );
    startInNode("kube-proxy", path.join(kubeBin, "kube-proxy"), [`--config=${path.join(dir, "kube-proxy.json")}`]);
    atStop("kube-proxy", () => stopProcess("kube-proxy"));
    await waitFor(
      "kube-proxy's rules for the kubernetes Service",
      async () => (await inNode("iptables", ["-t", "nat", "-S", "KUBE-SERVICES"])).stdout.includes("10.96.0.1/32"),
      started,
      tail,
      120_000,
    );

    const forward = async (host: string, port: number) => {
      const children = new Set<ChildProcess>();
      const sockets = new Set<net.Socket>();
      const server = net.createServer((socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
        const child = spawn("nsenter", [`--net=/run/netns/${netns}`, "--", "/bin/busybox", "nc", host, String(port)], {
          stdio: ["pipe", "pipe", "ignore"],
        });
        children.add(child);
        socket.pipe(child.stdin!);
        child.stdout!.pipe(socket);
        child.stdin!.on("error", () => socket.destroy());
        // nc's stdout ends the socket (pipe) when nc ends.
        child.on("exit", () => children.delete(child));
        socket.on("error", () => socket.destroy());
        socket.on("close", () => child.kill("SIGKILL"));
      });
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", resolve);
      });
      let closed: Promise<void> | undefined;
      const close = () =>
        (closed ??= new Promise<void>((resolve) => {
          for (const child of children) child.kill("SIGKILL");
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        }));
      atStop(`forward to ${host}:${port}`, close);
      return { port: (server.address() as net.AddressInfo).port, close };
    };

    return { name, ip, hostIp, hostLink, podCidr, netns, dir, ctr, inNode, forward, importImages, tail, stop };
  } catch (error) {
    const logs = ["containerd", "kubelet", "kube-proxy"]
      .filter((p) => started.some((s) => s.name === p))
      .map((p) => `--- ${p}\n${tail(p)}`)
      .join("\n");
    const cleanupProblem = await stop().then(
      () => "",
      (cleanupError: unknown) => `\n(and ${(cleanupError as Error).message})`,
    );
    if (cleanupProblem) throw new Error(`${(error as Error).message}\n${logs}${cleanupProblem}`, { cause: error });
    throw new Error(
      `${(error as Error).message}${logs && !(error as Error).message.includes("---") ? `\n${logs}` : ""}`,
      { cause: error },
    );
  }
}

/** Whether a process with this PID exists (for checks that a shell is gone). */
export function processExists(pid: number): boolean {
  return spawnSync("kill", ["-0", String(pid)]).status === 0;
}
