/**
 * Cluster DNS and NetworkPolicies with real packets (issue 31), on a real node of a real control
 * plane of its own (testkit/harness/node.ts, started with the cluster DNS address):
 * - CoreDNS (testkit/harness/cluster-services.ts startClusterDns: kubeadm's objects, the binary built
 *   from its Go module) answers pods: a Service's full name, its short name from its namespace
 *   (the kubelet's search path), a headless Service's name and a pod's name under it;
 * - this machine reaches pod IPs (the node's route), so the API server does: its pods/proxy
 *   fetches a pod's page;
 * - kube-network-policies (startNetworkPolicies, v0.8.0 with its NFQUEUE verdict through the
 *   xtables target) drops what a policy denies: a default-deny ingress policy makes a connection
 *   time out (dropped, not refused); an allow rule for a namespace AND pod selector lets exactly
 *   that source in, not the same labels in another namespace, not another pod of that namespace;
 *   an egress policy that allows only DNS blocks the API server's Service while names still
 *   resolve; and the controls: each denied probe connects again once its policy is deleted.
 * Probes are busybox `nc -w 2` run in the pods (exec through the API server and the kubelet);
 * propagation is polled, never slept for. Prints the time to DNS Ready and to each policy enforced.
 */
import { PassThrough } from "node:stream";
import {
  CoreV1Api,
  Exec,
  KubeConfig,
  NetworkingV1Api,
  type V1NetworkPolicy,
  type V1NetworkPolicySpec,
  type V1Status,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControlPlane, type ControlPlane } from "../../testkit/harness/control-plane";
import {
  CLUSTER_DNS_IP,
  resolvedAddresses,
  startClusterDns,
  startNetworkPolicies,
} from "../../testkit/harness/cluster-services";
import { startNode, type RealNode } from "../../testkit/harness/node";
import { missingNodeTools } from "../../testkit/harness/node-host";
import { restrictedPod } from "../../testkit/harness/restricted-pod";
import { tcpProbeScript, tcpVerdict, type TcpVerdict } from "../../testkit/harness/tcp-probe";

const inCI = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());
const missing = missingNodeTools();
if (missing.length && !inCI)
  process.stderr.write(`cluster-network: [SKIPPED outside CI: missing ${missing.join(", ")}]\n`);

const NS_A = "net-a";
const NS_B = "net-b";
const PAGE = "hello-from-web";
/** The `kubernetes` Service: the API server, as pods reach it. */
const API_SERVICE = "10.96.0.1";

describe.skipIf(missing.length > 0 && !inCI)("cluster DNS and NetworkPolicies on a real node", () => {
  let controlPlane: ControlPlane;
  let node: RealNode;
  let core: CoreV1Api;
  let networking: NetworkingV1Api;
  let exec: Exec;
  let webIp: string;
  let webServiceIp: string;
  const figures: Record<string, string> = {};

  /** Runs a shell script in a pod's container; its exit code and its output (stdout and stderr). */
  async function sh(namespace: string, pod: string, script: string): Promise<{ code: number; out: string }> {
    const chunks: Buffer[] = [];
    const output = new PassThrough();
    output.on("data", (chunk: Buffer) => chunks.push(chunk));
    let status: V1Status | undefined;
    const socket = await exec.exec(namespace, pod, "app", ["sh", "-c", script], output, output, null, false, (s) => {
      status = s;
    });
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    const out = Buffer.concat(chunks).toString();
    if (!status) throw new Error(`exec in ${namespace}/${pod} ended without a status: ${out}`);
    if (status.status === "Success") return { code: 0, out };
    const exitCode = status.details?.causes?.find((cause) => cause.reason === "ExitCode")?.message;
    if (exitCode === undefined) throw new Error(`exec in ${namespace}/${pod} failed: ${JSON.stringify(status)}`);
    return { code: Number(exitCode), out };
  }

  /** A TCP probe from a pod to host:port (testkit/harness/tcp-probe.ts): its verdict and nc's output. */
  async function probe(
    namespace: string,
    pod: string,
    host: string,
    port: number,
  ): Promise<{ verdict: TcpVerdict; out: string }> {
    const result = await sh(namespace, pod, tcpProbeScript(host, port));
    return { verdict: tcpVerdict(result), out: result.out };
  }
  const verdict = async (namespace: string, pod: string, host: string, port: number) =>
    (await probe(namespace, pod, host, port)).verdict;

  /** A NetworkPolicy `name` for the pods labelled app=`app`, isolating them in the one direction its rules are for. */
  const appPolicy = (
    name: string,
    app: string,
    rules: Pick<V1NetworkPolicySpec, "ingress"> | Pick<V1NetworkPolicySpec, "egress">,
  ): V1NetworkPolicy => ({
    metadata: { name },
    spec: { podSelector: { matchLabels: { app } }, policyTypes: ["ingress" in rules ? "Ingress" : "Egress"], ...rules },
  });

  /** Creates a policy and polls `enforced` until it holds; records how long that took. */
  async function enforce(namespace: string, policy: V1NetworkPolicy, enforced: () => Promise<boolean>): Promise<void> {
    const started = performance.now();
    await networking.createNamespacedNetworkPolicy({ namespace, body: policy });
    await expect.poll(enforced, { timeout: 60_000, interval: 250 }).toBe(true);
    figures[`${policy.metadata!.name} enforced`] = `${((performance.now() - started) / 1000).toFixed(1)} s`;
  }
  /**
   * kube-network-policies' log on the node: at --v=2 it logs each packet it is handed from its
   * NFQUEUE and the verdict (pkg/networkpolicy/controller.go evaluatePacket: "Evaluating packet"
   * with the source and destination pods, then "Ingress NetworkPolicies"/"Egress NetworkPolicies"
   * with `allowed`).
   */
  async function networkPolicyLog(): Promise<string> {
    const [pod] = (
      await core.listNamespacedPod({ namespace: "kube-system", labelSelector: "app=kube-network-policies" })
    ).items;
    return core.readNamespacedPodLog({ namespace: "kube-system", name: pod!.metadata!.name! });
  }
  const deletePolicy = (namespace: string, name: string) =>
    networking.deleteNamespacedNetworkPolicy({ namespace, name });

  beforeAll(async () => {
    if (missing.length) throw new Error(`the real node cannot be tried: missing ${missing.join(", ")}`);
    const started = performance.now();
    controlPlane = await startControlPlane({ kwok: false });
    node = await startNode(controlPlane, { clusterDns: CLUSTER_DNS_IP });
    figures["control plane and node"] = `${((performance.now() - started) / 1000).toFixed(1)} s`;
    figures["CoreDNS answering a pod"] = `${(await startClusterDns(controlPlane, node)).toFixed(1)} s`;
    figures["kube-network-policies programmed"] = `${(await startNetworkPolicies(controlPlane, node)).toFixed(1)} s`;

    const admin = new KubeConfig();
    admin.loadFromFile(controlPlane.kubeconfig);
    core = admin.makeApiClient(CoreV1Api);
    networking = admin.makeApiClient(NetworkingV1Api);
    exec = new Exec(admin);

    for (const namespace of [NS_A, NS_B]) await core.createNamespace({ body: { metadata: { name: namespace } } });
    const idle = ["sh", "-c", "touch /tmp/ready && exec sleep 86400"];
    // The web pod answers on 8080, and is `web` under the headless Service `web-headless`
    // (a pod's hostname and subdomain give it that DNS name).
    await core.createNamespacedPod({
      namespace: NS_A,
      body: restrictedPod(
        "web",
        [
          "sh",
          "-c",
          `mkdir -p /tmp/www && echo ${PAGE} > /tmp/www/index.html && touch /tmp/ready && exec httpd -f -p 8080 -h /tmp/www`,
        ],
        { hostname: "web", subdomain: "web-headless" },
      ),
    });
    await core.createNamespacedService({
      namespace: NS_A,
      body: { metadata: { name: "web" }, spec: { selector: { app: "web" }, ports: [{ port: 8080 }] } },
    });
    await core.createNamespacedService({
      namespace: NS_A,
      body: {
        metadata: { name: "web-headless" },
        spec: { clusterIP: "None", selector: { app: "web" }, ports: [{ port: 8080 }] },
      },
    });
    // Two clients with the same labels in two namespaces, and another pod beside one of them.
    await core.createNamespacedPod({ namespace: NS_A, body: restrictedPod("client", idle) });
    await core.createNamespacedPod({ namespace: NS_B, body: restrictedPod("client", idle) });
    await core.createNamespacedPod({ namespace: NS_B, body: restrictedPod("other", idle) });
    for (const [namespace, name] of [
      [NS_A, "web"],
      [NS_A, "client"],
      [NS_B, "client"],
      [NS_B, "other"],
    ] as const) {
      // (expect.poll is for tests only, not hooks.)
      for (const deadline = Date.now() + 90_000; ;) {
        const pod = await core.readNamespacedPod({ namespace, name });
        if (pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) break;
        if (Date.now() > deadline)
          throw new Error(`pod ${namespace}/${name} not Ready: ${JSON.stringify(pod.status)}\n${node.tail("kubelet")}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    webIp = (await core.readNamespacedPod({ namespace: NS_A, name: "web" })).status!.podIP!;
    webServiceIp = (await core.readNamespacedService({ namespace: NS_A, name: "web" })).spec!.clusterIP!;
  });

  afterAll(async () => {
    console.log(
      `cluster-network: ${Object.entries(figures)
        .map(([what, time]) => `${what} ${time}`)
        .join(", ")}`,
    );
    await node?.stop();
    await controlPlane?.stop();
  });

  it("routes this machine to pod IPs: this process and the API server's pods/proxy fetch a pod's page", async () => {
    const direct = await fetch(`http://${webIp}:8080/`, { signal: AbortSignal.timeout(10_000) });
    expect(await direct.text()).toBe(`${PAGE}\n`);
    // The API server dials the pod's IP itself for pods/proxy (no kubelet between).
    const proxied = await controlPlane.request("GET", `/api/v1/namespaces/${NS_A}/pods/web:8080/proxy/`);
    expect(proxied).toEqual({ status: 200, body: `${PAGE}\n` });
  });

  it("resolves a Service's full and short names, a headless Service and a pod under it through CoreDNS", async () => {
    const resolve = async (name: string) => {
      const { code, out } = await sh(NS_A, "client", `nslookup ${name}`);
      expect(code, out).toBe(0);
      expect(out).toContain(`Server:\t\t${CLUSTER_DNS_IP}`);
      return resolvedAddresses(out, name);
    };
    expect(await resolve(`web.${NS_A}.svc.cluster.local`)).toEqual([webServiceIp]);
    expect(await resolve(`web-headless.${NS_A}.svc.cluster.local`)).toEqual([webIp]);
    expect(await resolve(`web.web-headless.${NS_A}.svc.cluster.local`)).toEqual([webIp]);
    // The short name through the search path the kubelet wrote (<namespace>.svc.cluster.local
    // first), and the page through the Service: from this namespace and, by <svc>.<ns>, from another.
    const resolvConf = (await sh(NS_A, "client", "cat /etc/resolv.conf")).out;
    expect(resolvConf).toMatch(
      new RegExp(`^search ${NS_A}\\.svc\\.cluster\\.local svc\\.cluster\\.local cluster\\.local`, "m"),
    );
    expect(await probe(NS_A, "client", "web", 8080)).toMatchObject({
      verdict: "connected",
      out: expect.stringContaining(PAGE),
    });
    expect(await probe(NS_B, "client", `web.${NS_A}`, 8080)).toMatchObject({ out: expect.stringContaining(PAGE) });
    // A name that does not exist is refused by the cluster's zone, not forwarded.
    const missingName = await sh(NS_A, "client", `nslookup nothing.${NS_A}.svc.cluster.local`);
    expect(missingName.out).toMatch(/NXDOMAIN/);
  });

  it("drops what a default-deny ingress policy denies; an allow rule for namespace AND pod lets exactly that source in; deleted, all connect again", async () => {
    // Before any policy every client reaches the web pod.
    for (const [namespace, pod] of [
      [NS_A, "client"],
      [NS_B, "client"],
      [NS_B, "other"],
    ] as const)
      expect(await verdict(namespace, pod, webIp, 8080), `${namespace}/${pod}`).toBe("connected");

    await enforce(
      NS_A,
      { metadata: { name: "default-deny-ingress" }, spec: { podSelector: {}, policyTypes: ["Ingress"] } },
      async () => (await verdict(NS_A, "client", webIp, 8080)) === "dropped",
    );
    // Dropped by kube-network-policies' verdict on the packet it was queued.
    const log = await networkPolicyLog();
    expect(log).toMatch(new RegExp(`"Evaluating packet" srcPod="${NS_A}/client" dstPod="${NS_A}/web"`));
    expect(log).toMatch(/"Ingress NetworkPolicies".*allowed=false/);
    // The same from another namespace, and through the Service's IP.
    expect(await verdict(NS_B, "client", webIp, 8080)).toBe("dropped");
    expect(await verdict(NS_B, "client", webServiceIp, 8080)).toBe("dropped");

    await enforce(
      NS_A,
      appPolicy("web-from-b-clients", "web", {
        ingress: [
          {
            _from: [
              {
                namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": NS_B } },
                podSelector: { matchLabels: { app: "client" } },
              },
            ],
            ports: [{ protocol: "TCP", port: 8080 }],
          },
        ],
      }),
      async () => (await verdict(NS_B, "client", webIp, 8080)) === "connected",
    );
    // Exactly that source: not the same labels in the web pod's own namespace, not another pod of net-b.
    expect(await verdict(NS_A, "client", webIp, 8080)).toBe("dropped");
    expect(await verdict(NS_B, "other", webIp, 8080)).toBe("dropped");
    expect(await probe(NS_B, "client", `web.${NS_A}`, 8080)).toMatchObject({
      verdict: "connected",
      out: expect.stringContaining(PAGE),
    });

    // The control: the same denied probes connect once the policies are gone.
    const started = performance.now();
    await deletePolicy(NS_A, "web-from-b-clients");
    await deletePolicy(NS_A, "default-deny-ingress");
    await expect.poll(() => verdict(NS_A, "client", webIp, 8080), { timeout: 60_000, interval: 250 }).toBe("connected");
    figures["ingress policies lifted"] = `${((performance.now() - started) / 1000).toFixed(1)} s`;
    expect(await verdict(NS_B, "other", webIp, 8080)).toBe("connected");
  });

  it("an egress policy that allows only DNS blocks the API server's Service while names resolve; deleted, it connects again", async () => {
    expect(await verdict(NS_B, "other", API_SERVICE, 443)).toBe("connected");
    await enforce(
      NS_B,
      appPolicy("other-dns-only", "other", {
        egress: [
          {
            ports: [
              { protocol: "UDP", port: 53 },
              { protocol: "TCP", port: 53 },
            ],
          },
        ],
      }),
      async () => (await verdict(NS_B, "other", API_SERVICE, 443)) === "dropped",
    );
    expect(await networkPolicyLog()).toMatch(/"Egress NetworkPolicies".*allowed=false/);
    // DNS is allowed: the name resolves; the connection it names is not.
    const lookup = await sh(NS_B, "other", `nslookup web.${NS_A}.svc.cluster.local`);
    expect(resolvedAddresses(lookup.out, `web.${NS_A}.svc.cluster.local`), lookup.out).toEqual([webServiceIp]);
    expect(await verdict(NS_B, "other", webIp, 8080)).toBe("dropped");
    // Only the selected pod: its neighbour still reaches both.
    expect(await verdict(NS_B, "client", API_SERVICE, 443)).toBe("connected");
    expect(await verdict(NS_B, "client", webIp, 8080)).toBe("connected");

    await deletePolicy(NS_B, "other-dns-only");
    await expect
      .poll(() => verdict(NS_B, "other", API_SERVICE, 443), { timeout: 60_000, interval: 250 })
      .toBe("connected");
    expect(await verdict(NS_B, "other", webIp, 8080)).toBe("connected");
  });
});
