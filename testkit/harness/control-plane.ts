/**
 * A real Kubernetes v1.37.2 control plane on 127.0.0.1, started for the tests from the binaries
 * scripts/realcp/build.sh makes (tool `kube`): etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler, plus kwok (tool `kwok`) for one fake node on which the scheduler places pods and
 * kwok takes them to Running and Ready and binds their volumes (there is no kubelet: nothing runs).
 *
 * Flags follow controller-runtime's envtest (pkg/internal/testing/controlplane/apiserver.go) and
 * kwok's (pkg/kwokctl/components/kube_apiserver.go), with what these tests need on top:
 * - authorization Node,RBAC (so RBAC decides, as on a real cluster);
 * - Pod Security admission (on by default since 1.25) with `restricted` as the cluster's default
 *   level, through its AdmissionConfiguration (kubernetes.io/docs/concepts/security/pod-security-admission,
 *   "Configure the Admission Controller"): every namespace without a label of its own is restricted;
 * - --endpoint-reconciler-type=none: no `kubernetes` Endpoints for an address nothing serves on.
 * Certificates are made with openssl: a CA, the API server's serving certificate, and client
 * certificates (the admin in `system:masters`, the controller manager and scheduler as the users the
 * bootstrap RBAC policy binds).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import https from "node:https";
import { KubeConfig, KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { NEW_EC_KEY } from "../gateway/tls";
import { freePort, waitForPort } from "./net";
import { realTool } from "./realcp-tool";

/** Whether a Node (its JSON) has the condition Ready=True. */
export function nodeReady(body: string): boolean {
  const conditions = (JSON.parse(body).status?.conditions ?? []) as { type: string; status: string }[];
  return conditions.some((c) => c.type === "Ready" && c.status === "True");
}

export interface ControlPlane {
  /** Folder of its certificates, kubeconfigs, data and one log file per process. */
  readonly dir: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** Kubeconfig of a `system:masters` user. */
  readonly kubeconfig: string;
  readonly caFile: string;
  /** The fake node's name. */
  readonly nodeName: string;
  /** The API server's audit log (JSON lines), when started with `auditLog`. */
  readonly auditLog?: string;
  /** A request as the admin, the body sent as JSON exactly as given. */
  request(method: string, url: string, body?: unknown): Promise<{ status: number; body: string }>;
  /** Stops every process it started and removes its folder. */
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Write every request's metadata to an audit log. */
  readonly auditLog?: boolean;
  /**
   * Start kwok and its fake node (the default). Without it no node exists until one registers
   * (testkit/harness/node.ts: a real kubelet), so the scheduler places pods on real nodes only.
   */
  readonly kwok?: boolean;
  /**
   * How many pods the fake node holds (1000 unless given). The scheduler leaves a pod Pending once
   * the node's `pods` allocatable is used up, as it would on a real full node: a benchmark of 1,000
   * workspaces (plus the stack's other pods, plus the chart's copy) needs more than the default.
   */
  readonly podCapacity?: number;
  /**
   * The API server dials a webhook's Service at one of its endpoints (a pod IP) instead of its
   * ClusterIP (--enable-aggregator-routing: kube-apiserver's buildServiceResolver picks
   * NewEndpointServiceResolver). On a real node the pod network is routable from this machine, the
   * Service network is not (kube-proxy's rules live in the node's namespace): istiod's injection
   * webhook needs this.
   */
  readonly endpointRouting?: boolean;
}

const SERVICE_CIDR = "10.96.0.0/16";
const POD_CIDR = "10.244.0.0/16";
const NODE_NAME = "kwok-node-0";
const DEFAULT_POD_CAPACITY = 1000;

function openssl(dir: string, args: string[]): void {
  const result = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${result.stderr || result.error}`);
}

/** A key and a certificate signed by the CA (`ca.crt`, `ca.key` in `dir`), with the given subject and extensions. */
export function issue(dir: string, name: string, subject: string, extensions: string): void {
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(dir, ["req", "-new", ...NEW_EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject]);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-out",
    `${name}.crt`,
    "-extfile",
    `${name}.ext`,
  ]);
}

function makeCertificates(dir: string): void {
  openssl(dir, [
    "req",
    "-x509",
    ...NEW_EC_KEY,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=entryway-test-ca",
  ]);
  const serviceIp = "10.96.0.1"; // the first address of SERVICE_CIDR: the `kubernetes` Service's
  issue(
    dir,
    "apiserver",
    "/CN=kube-apiserver",
    `subjectAltName=IP:127.0.0.1,IP:${serviceIp},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n`,
  );
  const client = "extendedKeyUsage=clientAuth\n";
  issue(dir, "admin", "/O=system:masters/CN=entryway-test-admin", client);
  issue(dir, "controller-manager", "/CN=system:kube-controller-manager", client);
  issue(dir, "scheduler", "/CN=system:kube-scheduler", client);
  // The API server's client certificate towards kubelets (exec, attach, port-forward, logs): a
  // kubelet that authenticates by x509 and authorizes by webhook lets `system:masters` in.
  issue(dir, "apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", client);
  // Service-account tokens are signed with this key and checked with its public half.
  openssl(dir, ["genrsa", "-out", "sa.key", "2048"]);
  openssl(dir, ["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
}

/** A kubeconfig for the client certificate `<user>.crt` in `dir`; `tlsServerName` when the server is dialled by another address than its certificate names. */
export function writeKubeconfig(dir: string, user: string, server: string, tlsServerName?: string): string {
  const file = path.join(dir, `${user}.kubeconfig`);
  writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{name: test, cluster: {server: '" +
        server +
        "', certificate-authority: " +
        path.join(dir, "ca.crt") +
        (tlsServerName ? ", tls-server-name: " + tlsServerName : "") +
        "}}]",
      "users: [{name: " +
        user +
        ", user: {client-certificate: " +
        path.join(dir, `${user}.crt`) +
        ", client-key: " +
        path.join(dir, `${user}.key`) +
        "}}]",
      "contexts: [{name: test, context: {cluster: test, user: " + user + "}}]",
      "current-context: test",
      "",
    ].join("\n"),
  );
  return file;
}

const ADMISSION_CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodSecurity
    configuration:
      apiVersion: pod-security.admission.config.k8s.io/v1
      kind: PodSecurityConfiguration
      defaults: { enforce: restricted, enforce-version: latest, audit: restricted, warn: restricted }
      exemptions: { namespaces: [kube-system] }
`;

// Every request's metadata (who, verb, resource, namespace, decision), no bodies.
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
`;

/** A process a harness started, by the name its log file has. */
export interface Started {
  readonly name: string;
  readonly child: ChildProcess;
}

function startProcess(dir: string, name: string, binary: string, args: string[]): Started {
  const log = createWriteStream(path.join(dir, `${name}.log`));
  const child = spawn(binary, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  return { name, child };
}

function tail(dir: string, name: string): string {
  try {
    return readFileSync(path.join(dir, `${name}.log`), "utf8")
      .trim()
      .split("\n")
      .slice(-15)
      .join("\n");
  } catch {
    return "(no log)";
  }
}

/** Stops a child process: SIGTERM, then SIGKILL after 10 s; resolves once it exited. */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

async function stopAll(started: Started[]): Promise<void> {
  await Promise.all([...started].reverse().map(({ child }) => stopChild(child)));
}

/**
 * Polls `ready` until it is true, failing with the processes' logs (`tail` of a process's name)
 * when one of them died or time ran out.
 */
export async function waitFor(
  what: string,
  ready: () => Promise<boolean>,
  started: Started[],
  tail: (name: string) => string,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = started.find(({ child }) => child.exitCode !== null || child.signalCode !== null);
    if (dead)
      throw new Error(
        `${dead.name} exited (${dead.child.exitCode ?? dead.child.signalCode}) while waiting for ${what}:\n${tail(dead.name)}`,
      );
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}:\n${started.map(({ name }) => `--- ${name}\n${tail(name)}`).join("\n")}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * A request as the admin, with its client certificate and the object as JSON, with no library
 * between the test and the server: @kubernetes/client-node's KubernetesObjectApi maps objects onto
 * its typed models and drops what they do not name (a CRD schema's `x-kubernetes-int-or-string`,
 * so the API server refuses Istio's CRDs: "type: Required value: must not be empty").
 */
function requestAsAdmin(
  dir: string,
  server: string,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      new URL(url, server),
      {
        method,
        ca: readFileSync(path.join(dir, "ca.crt")),
        cert: readFileSync(path.join(dir, "admin.crt")),
        key: readFileSync(path.join(dir, "admin.key")),
        headers: body === undefined ? {} : { "content-type": "application/json" },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    request.on("error", reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** A client of the API server for a kubeconfig. */
export function objectApi(kubeconfig: string): KubernetesObjectApi {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  return KubernetesObjectApi.makeApiClient(config);
}

/** Whether the API server has the object (a 404 is false; any other error is thrown). */
export async function objectExists(api: KubernetesObjectApi, object: KubernetesObject): Promise<boolean> {
  try {
    await api.read({
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata: { name: object.metadata!.name!, namespace: object.metadata?.namespace },
    });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return false;
    throw error;
  }
}

async function createObjects(kubeconfig: string, objects: KubernetesObject[]): Promise<void> {
  const api = objectApi(kubeconfig);
  for (const object of objects) await api.create(object);
}

/**
 * The fake node kwok manages (it picks nodes by this annotation): no taint, so every pod may land
 * on it; its capacity is what the scheduler fits requests into.
 */
export function fakeNode(
  name = NODE_NAME,
  labels: Record<string, string> = {},
  podCapacity = DEFAULT_POD_CAPACITY,
): KubernetesObject {
  const capacity = { cpu: "32", memory: "256Gi", pods: String(podCapacity), "ephemeral-storage": "1Ti" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
        ...labels,
      },
    },
    status: { capacity, allocatable: capacity },
  } as KubernetesObject;
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const kubeBin = realTool("kube");
  const kwokDir = options.kwok === false ? "" : path.dirname(realTool("kwok"));
  const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-cp-"));
  const started: Started[] = [];
  const logTail = (name: string) => tail(dir, name);
  try {
    makeCertificates(dir);
    writeFileSync(path.join(dir, "admission.yaml"), ADMISSION_CONFIG);
    const [etcdPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    started.push(
      startProcess(dir, "etcd", path.join(kubeBin, "etcd"), [
        `--data-dir=${path.join(dir, "etcd")}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
        // A throwaway store: fsync buys nothing here and costs seconds on a shared disk.
        "--unsafe-no-fsync",
        "--log-level=warn",
      ]),
    );
    await waitForPort(etcdPort, "etcd", () => started[0]!.child.exitCode === null);

    const server = `https://127.0.0.1:${apiPort}`;
    let auditLog: string | undefined;
    const auditArgs: string[] = [];
    if (options.auditLog) {
      auditLog = path.join(dir, "audit.jsonl");
      writeFileSync(path.join(dir, "audit-policy.yaml"), AUDIT_POLICY);
      auditArgs.push(
        `--audit-policy-file=${path.join(dir, "audit-policy.yaml")}`,
        `--audit-log-path=${auditLog}`,
        "--audit-log-mode=blocking",
      );
    }
    started.push(
      startProcess(dir, "kube-apiserver", path.join(kubeBin, "kube-apiserver"), [
        `--etcd-servers=${etcdUrl}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${apiPort}`,
        `--cert-dir=${path.join(dir, "apiserver-certs")}`,
        `--tls-cert-file=${path.join(dir, "apiserver.crt")}`,
        `--tls-private-key-file=${path.join(dir, "apiserver.key")}`,
        `--client-ca-file=${path.join(dir, "ca.crt")}`,
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${path.join(dir, "sa.pub")}`,
        `--service-account-signing-key-file=${path.join(dir, "sa.key")}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        `--admission-control-config-file=${path.join(dir, "admission.yaml")}`,
        "--endpoint-reconciler-type=none",
        // Dial a node's kubelet at its InternalIP (127.0.0.1 here), never by a host name to look up.
        "--kubelet-preferred-address-types=InternalIP",
        `--kubelet-client-certificate=${path.join(dir, "apiserver-kubelet-client.crt")}`,
        `--kubelet-client-key=${path.join(dir, "apiserver-kubelet-client.key")}`,
        ...auditArgs,
        ...(options.endpointRouting ? ["--enable-aggregator-routing=true"] : []),
      ]),
    );
    const admin = writeKubeconfig(dir, "admin", server);
    const get = (url: string) => requestAsAdmin(dir, server, "GET", url);
    await waitFor("the API server's /readyz", async () => (await get("/readyz")).status === 200, started, logTail);

    started.push(
      startProcess(dir, "kube-controller-manager", path.join(kubeBin, "kube-controller-manager"), [
        `--kubeconfig=${writeKubeconfig(dir, "controller-manager", server)}`,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        "--secure-port=0",
        `--service-account-private-key-file=${path.join(dir, "sa.key")}`,
        `--root-ca-file=${path.join(dir, "ca.crt")}`,
        "--use-service-account-credentials=true",
        `--cluster-cidr=${POD_CIDR}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
      ]),
      startProcess(dir, "kube-scheduler", path.join(kubeBin, "kube-scheduler"), [
        `--kubeconfig=${writeKubeconfig(dir, "scheduler", server)}`,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        "--secure-port=0",
      ]),
    );
    if (options.kwok !== false) {
      started.push(
        startProcess(dir, "kwok", path.join(kwokDir, "bin", "kwok"), [
          `--kubeconfig=${admin}`,
          `--config=${path.join(kwokDir, "share", "stages.yaml")}`,
          "--manage-all-nodes=false",
          "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
          `--cidr=${POD_CIDR}`,
          // The node's address is loopback: whatever asks for its "kubelet" (an exec) reaches this
          // machine only, and is refused, as a node without a kubelet refuses.
          "--node-ip=127.0.0.1",
          "--node-lease-duration-seconds=40",
        ]),
      );

      await createObjects(admin, [
        ...parseAllDocuments(readFileSync(path.join(kwokDir, "share", "objects.yaml"), "utf8")).map(
          (doc) => doc.toJS() as KubernetesObject,
        ),
        fakeNode(NODE_NAME, {}, options.podCapacity),
      ]);
      await waitFor(
        `node ${NODE_NAME} Ready`,
        async () => nodeReady((await get(`/api/v1/nodes/${NODE_NAME}`)).body),
        started,
        logTail,
      );
    }
    // The `default` ServiceAccount of a namespace (the controller manager's job) shows its
    // controllers run: a pod cannot be created before it exists.
    await waitFor(
      "the default ServiceAccount",
      async () => (await get("/api/v1/namespaces/default/serviceaccounts/default")).status === 200,
      started,
      logTail,
    );

    return {
      dir,
      server,
      kubeconfig: admin,
      caFile: path.join(dir, "ca.crt"),
      nodeName: NODE_NAME,
      auditLog,
      request: (method, url, body) => requestAsAdmin(dir, server, method, url, body),
      async stop() {
        await stopAll(started);
        if (!process.env.ENTRYWAY_KEEP_CONTROL_PLANE) rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopAll(started);
    throw error;
  }
}

/**
 * Creates the upstream CRDs the stack's objects need (tool `crds`: Istio's and prometheus-operator's
 * monitors), as JSON exactly as upstream wrote them, and waits until the API server serves them.
 */
export async function installUpstreamCrds(controlPlane: ControlPlane): Promise<void> {
  const share = path.join(path.dirname(realTool("crds")), "share");
  const crds = ["istio.yaml", "prometheus-operator.yaml"].flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(share, file), "utf8"))
      .map((doc) => doc.toJS() as KubernetesObject | null)
      .filter((object): object is KubernetesObject => object?.kind === "CustomResourceDefinition"),
  );
  const collection = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  for (const crd of crds) {
    const created = await controlPlane.request("POST", collection, crd);
    if (created.status !== 201) throw new Error(`the API server refused CRD ${crd.metadata?.name}: ${created.body}`);
  }
  for (const crd of crds) {
    for (let attempt = 0; ; attempt++) {
      const read = JSON.parse((await controlPlane.request("GET", `${collection}/${crd.metadata!.name}`)).body) as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      if (read.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
      if (attempt > 120) throw new Error(`CRD ${crd.metadata?.name} was not established`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
