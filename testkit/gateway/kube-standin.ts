// STAND-IN FOR THE KUBERNETES API SERVER AND KUBELET (no cluster runs here). It serves the few REST
// calls the gateway makes (pods, StatefulSets, Deployments, TokenReview, SubjectAccessReview, /version)
// and the pods/exec WebSocket in the v5.channel.k8s.io and v4.channel.k8s.io subprotocols. This file
// holds its options, its routes and its start; each part it models from upstream is a module of its
// own under kube-standin/, its header naming the sources it follows:
// - kube-standin/exec.ts: the kubelet's exec (the channels, real shells in real PTYs, a closed exec
//   WebSocket leaving the process running as with runc, distroless containers, a late runtime);
// - kube-standin/reviews.ts: TokenReview and SubjectAccessReview (kubernetes/api authentication/v1
//   and authorization/v1 types.go);
// - kube-standin/ephemeral.ts: the pods/ephemeralcontainers subresource `kubectl debug` patches, its
//   validation (kubernetes/kubernetes pkg/apis/core/validation/validation.go) and the statuses a
//   kubelet reports;
// - kube-standin/api-objects.ts: the objects served, their uids and controller ownerReferences.
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer, type WebSocket } from "ws";
import {
  controllerReference,
  json,
  notFound,
  podObject,
  readBody,
  selectorOf,
  standinUid,
  type PodFixture,
} from "./kube-standin/api-objects.js";
import { EphemeralContainers, type EphemeralPatchRecord } from "./kube-standin/ephemeral.js";
import { failExec, freshTerminalModes, processesInSessions, runExec } from "./kube-standin/exec.js";
import {
  judgeAccessReview,
  reviewToken,
  standinUser,
  type StandinUser,
  type SubjectAccessReviewSpec,
} from "./kube-standin/reviews.js";
import { selfSignedCertificate } from "./tls.js";

export { replicaSetPod, standinUid, statefulSetPod, type PodFixture } from "./kube-standin/api-objects.js";
export { patchEphemeralContainers, type EphemeralPatchRecord } from "./kube-standin/ephemeral.js";
export {
  API_SERVER_AUDIENCE,
  judgeAccessReview,
  standinUser,
  type StandinUser,
  type SubjectAccessReviewSpec,
} from "./kube-standin/reviews.js";

export type ExecProtocol = "v5.channel.k8s.io" | "v4.channel.k8s.io";

export interface StandinOptions {
  /** The subprotocol to choose when the client offers it. */
  protocol: ExecProtocol;
  /** Token the gateway's service account presents. */
  serviceAccountToken: string;
  pods: PodFixture[];
  statefulSets?: { namespace: string; name: string }[];
  deployments?: {
    namespace: string;
    name: string;
    matchLabels: Record<string, string>;
    matchExpressions?: Record<string, unknown>[];
  }[];
  /** ReplicaSets, each controlled by the Deployment named (or by none: an orphan). */
  replicaSets?: { namespace: string; name: string; deployment?: string; labels: Record<string, string> }[];
  /** TokenReview: user tokens to user names (audience "entryway", groups system:authenticated) or full user info. */
  users?: Record<string, string | StandinUser>;
  /** SubjectAccessReview: user name to the namespaces (or "namespace/pod") where it may create pods/exec. */
  execAllowed?: Record<string, string[]>;
  /** The same for patch pods/ephemeralcontainers (adding a debug container). */
  debugAllowed?: Record<string, string[]>;
  /** Images the stand-in kubelet can pull (default: all); an ephemeral container with another one never runs. */
  pullableImages?: string[];
  /**
   * A runtime that sets a new terminal's modes late, as conmon does: what it read before the process
   * ran (a fresh terminal's modes) it writes back this many ms after the process started
   * (containers/conmon src/ctrl.c terminal_accept_cb: tcgetattr, ONLCR, tcsetattr; ONLCR is on
   * already on a fresh terminal), and it passes the terminal's output on only from then (src/conmon.c
   * adds its reader after that). The window is wide here, where conmon's is a preemption between two
   * system calls: what a command sets in it is undone every time.
   */
  lateTerminalModesMs?: number;
}

export interface ExecRecord {
  namespace: string;
  pod: string;
  container: string;
  command: string[];
  tty: boolean;
  pid: number;
}

export interface KubeStandin {
  url: string;
  kubeconfigPath: string;
  /** Every exec started, in order. */
  execs: ExecRecord[];
  /** Every ephemeralcontainers PATCH received, in order, and every status an ephemeral container went through. */
  ephemeralPatches: EphemeralPatchRecord[];
  ephemeralTransitions: { pod: string; container: string; state: string }[];
  /** The ephemeral containers stored on a pod ("namespace/pod"), as the API serves them. */
  ephemeralContainers(pod: string): Record<string, unknown>[];
  /** Every TokenReview spec and SubjectAccessReview spec received, in order. */
  tokenReviews: unknown[];
  accessReviews: SubjectAccessReviewSpec[];
  /** The tokens TokenReview knows, live: deleting one is deleting its ServiceAccount. */
  users: Map<string, StandinUser>;
  /** Where each user may create pods/exec, live: emptying a user's list is removing their RoleBinding. */
  execAllowed: Record<string, string[]>;
  /** Drops every exec WebSocket without a status, as an API server restart does; the processes stay. */
  dropConnections(): void;
  /** Live processes in the sessions of the execs started with stdin (TTY or pipe mode): the shells and whatever they started. */
  liveShells(): number[];
  stop(): Promise<void>;
}

export async function startKubeStandin(options: StandinOptions): Promise<KubeStandin> {
  const dir = mkdtempSync(join(tmpdir(), "entryway-kube-"));
  const lateTerminalModes = options.lateTerminalModesMs
    ? { ms: options.lateTerminalModesMs, modes: await freshTerminalModes() }
    : undefined;
  const execs: ExecRecord[] = [];
  const tokenReviews: unknown[] = [];
  const accessReviews: SubjectAccessReviewSpec[] = [];
  const users = new Map(Object.entries(options.users ?? {}).map(([token, user]) => [token, standinUser(token, user)]));
  const execAllowed = { ...options.execAllowed };
  /** Session leaders of the execs with stdin (a TTY, or pipe mode): the shells the gateway started. */
  const shells: number[] = [];
  const sockets = new Set<WebSocket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, action: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  };
  const ephemeral = new EphemeralContainers(later, options.pullableImages);
  const authorized = (request: IncomingMessage) =>
    request.headers.authorization === `Bearer ${options.serviceAccountToken}`;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!authorized(request))
      return json(response, 401, { kind: "Status", status: "Failure", code: 401, message: "Unauthorized" });
    const url = new URL(request.url ?? "/", "http://standin");
    const path = url.pathname;
    let m: RegExpExecArray | null;
    if (path === "/version") return json(response, 200, { major: "1", minor: "35", gitVersion: "v1.35.0-standin" });
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(path))) {
      const pod = options.pods.find((p) => p.namespace === m![1] && p.name === m![2]);
      return pod ? json(response, 200, podObject(pod, ephemeral.of(pod))) : notFound(response, `pods "${m[2]}"`);
    }
    if (
      (m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/ephemeralcontainers$/.exec(path)) &&
      request.method === "PATCH"
    ) {
      const pod = options.pods.find((p) => p.namespace === m![1] && p.name === m![2]);
      return pod ? ephemeral.patch(pod, request, response) : ephemeral.notFound(m[1]!, m[2]!, response);
    }
    // A namespace's pods, or every namespace's (GET /api/v1/pods).
    if ((m = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?pods$/.exec(path))) {
      const selector = selectorOf(url);
      const items = options.pods.filter(
        (p) =>
          (m![1] === undefined || p.namespace === m![1]) &&
          Object.entries(selector).every(([k, v]) => p.labels?.[k] === v),
      );
      return json(response, 200, {
        apiVersion: "v1",
        kind: "PodList",
        metadata: {},
        items: items.map((p) => podObject(p, ephemeral.of(p))),
      });
    }
    if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/(statefulsets|deployments)\/([^/]+)$/.exec(path))) {
      const [, namespace, kind, name] = m;
      if (kind === "statefulsets") {
        const found = options.statefulSets?.some((s) => s.namespace === namespace && s.name === name);
        return found
          ? json(response, 200, {
              apiVersion: "apps/v1",
              kind: "StatefulSet",
              metadata: { name, namespace, uid: standinUid("StatefulSet", namespace!, name!) },
              spec: {},
            })
          : notFound(response, `statefulsets.apps "${name}"`);
      }
      const deployment = options.deployments?.find((d) => d.namespace === namespace && d.name === name);
      const selector = {
        matchLabels: deployment?.matchLabels,
        ...(deployment?.matchExpressions ? { matchExpressions: deployment.matchExpressions } : {}),
      };
      return deployment
        ? json(response, 200, {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name, namespace, uid: standinUid("Deployment", namespace!, name!) },
            spec: { selector },
          })
        : notFound(response, `deployments.apps "${name}"`);
    }
    if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/replicasets$/.exec(path))) {
      const namespace = m[1]!;
      const selector = selectorOf(url);
      const items = (options.replicaSets ?? [])
        .filter((rs) => rs.namespace === namespace && Object.entries(selector).every(([k, v]) => rs.labels[k] === v))
        .map((rs) => ({
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          metadata: {
            name: rs.name,
            namespace,
            uid: standinUid("ReplicaSet", namespace, rs.name),
            labels: rs.labels,
            ...(rs.deployment
              ? { ownerReferences: [controllerReference("Deployment", namespace, rs.deployment)] }
              : {}),
          },
          spec: { selector: { matchLabels: rs.labels } },
        }));
      return json(response, 200, { apiVersion: "apps/v1", kind: "ReplicaSetList", metadata: {}, items });
    }
    if (request.method === "POST" && path === "/apis/authentication.k8s.io/v1/tokenreviews") {
      const body = (await readBody(request)) as { spec?: { token?: string; audiences?: string[] } };
      tokenReviews.push(body.spec ?? {});
      return json(response, 201, { ...body, status: reviewToken(body.spec ?? {}, users) });
    }
    if (request.method === "POST" && path === "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
      const body = (await readBody(request)) as { spec?: SubjectAccessReviewSpec };
      accessReviews.push(body.spec ?? {});
      return json(response, 201, {
        ...body,
        status: judgeAccessReview(body.spec ?? {}, [...users.values()], execAllowed, options.debugAllowed ?? {}),
      });
    }
    notFound(response, path);
  }

  // TLS like a real API server (client-node refuses plain HTTP): a throwaway self-signed certificate for 127.0.0.1.
  const { keyPath, certPath } = selfSignedCertificate(dir);
  const cert = readFileSync(certPath);
  const server = https.createServer({ key: readFileSync(keyPath), cert }, (request, response) => {
    handle(request, response).catch((error: Error) => json(response, 500, { message: error.message }));
  });
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has(options.protocol) ? options.protocol : false),
  });

  server.on("upgrade", (request, socket, head) => {
    const url = new URL(request.url ?? "/", "http://standin");
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(url.pathname);
    const pod = m && options.pods.find((p) => p.namespace === m[1] && p.name === m[2]);
    const container = url.searchParams.get("container") ?? pod?.containers[0] ?? "";
    if (!authorized(request) || !pod || !(pod.containers.includes(container) || ephemeral.running(pod, container))) {
      socket.end(`HTTP/1.1 ${authorized(request) ? "404 Not Found" : "401 Unauthorized"}\r\nConnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
      const command = url.searchParams.getAll("command");
      const tty = url.searchParams.get("tty") === "true";
      if (pod.distroless && pod.containers.includes(container)) return failExec(ws, command[0] ?? "");
      runExec(
        ws,
        command,
        tty,
        url.searchParams.get("stdin") === "true",
        (pid) => execs.push({ namespace: pod.namespace, pod: pod.name, container, command, tty, pid }),
        { dir, shells, later, lateTerminalModes },
      );
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfigPath = join(dir, "kubeconfig");
  writeFileSync(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "standin", cluster: { server: url, "certificate-authority-data": cert.toString("base64") } }],
      users: [{ name: "gateway", user: { token: options.serviceAccountToken } }],
      contexts: [{ name: "standin", context: { cluster: "standin", user: "gateway" } }],
      "current-context": "standin",
    }),
  );

  return {
    url,
    kubeconfigPath,
    execs,
    ephemeralPatches: ephemeral.patches,
    ephemeralTransitions: ephemeral.transitions,
    ephemeralContainers: (pod) => ephemeral.containers(pod),
    tokenReviews,
    accessReviews,
    users,
    execAllowed,
    liveShells: () => processesInSessions(new Set(shells)),
    dropConnections: () => {
      for (const ws of sockets) ws.terminate();
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      for (const ws of sockets) ws.terminate();
      for (const pid of processesInSessions(new Set(shells))) process.kill(pid, "SIGKILL");
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
