// Kubernetes pods/exec through @kubernetes/client-node. Two quirks shape this file: the client
// resizes only when the stdout stream has `rows`/`columns` and emits 'resize', and its status
// callback does not always fire, so the end of the exec is taken from the WebSocket's close too.
//
// Debug containers follow kubectl debug (kubernetes/kubectl pkg/cmd/debug/debug.go,
// debugByEphemeralContainer): a strategic merge patch of the pod's `ephemeralcontainers`
// subresource that lists the new container (ephemeralContainers merge by name), with
// targetContainerName so it joins the target container's process namespace; then the pod's
// status.ephemeralContainerStatuses until it runs (kubectl's waitForContainer watches for
// State.Running; here a GET every DEBUG_POLL_MS, so the gateway needs no watch right). The API
// server refuses ports, resources, probes and lifecycle on an ephemeral container, a name any
// container of the pod has, and any change to one already added (kubernetes/kubernetes
// pkg/apis/core/validation/validation.go: validateEphemeralContainers, allowedEphemeralContainerFields,
// ValidatePodEphemeralContainersUpdate), so the gateway sends only name, image, command,
// targetContainerName and securityContext, under a name of its own making. The security context is
// kubectl debug's "restricted" profile (pkg/cmd/debug/profiles.go: disallowRoot, dropCapabilities,
// disallowPrivilegeEscalation, setSeccompProfile), so the container passes Pod Security
// "restricted" admission, with the target container's runAsUser/runAsGroup: the same user can read
// the target's /proc entries without extra capabilities.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Writable, PassThrough } from "node:stream";
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  Exec,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
  type V1EphemeralContainer,
  type V1ObjectMeta,
  type V1Pod,
  type V1Status,
} from "@kubernetes/client-node";
import type { Target } from "../target.js";
import {
  DebugContainerError,
  NotFoundError,
  type Backend,
  type DebugContainers,
  type ExecControl,
  type ResolvedTarget,
} from "./backend.js";

/** How often a new debug container's status is read while it starts. */
const DEBUG_POLL_MS = 250;

export function loadKubeConfig(path: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (path) kubeConfig.loadFromFile(path);
  else if (process.env.KUBERNETES_SERVICE_HOST) kubeConfig.loadFromCluster();
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}

/** Exit code from the status channel (3): Success is 0, NonZeroExitCode carries it in details.causes. */
export function exitCodeFromStatus(status: V1Status): number | null {
  if (status.status === "Success") return 0;
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  const code = cause?.message === undefined ? NaN : Number(cause.message);
  return Number.isInteger(code) ? code : null;
}

function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

/** Whether `owner` is `object`'s controller (its ownerReference with controller: true, by uid). */
function controlledBy(object: { metadata?: V1ObjectMeta }, owner: { metadata?: V1ObjectMeta }): boolean {
  const uid = owner.metadata?.uid;
  return (
    uid !== undefined &&
    (object.metadata?.ownerReferences ?? []).some((reference) => reference.controller === true && reference.uid === uid)
  );
}

function isRunning(pod: V1Pod): boolean {
  return pod.status?.phase === "Running" && !pod.metadata?.deletionTimestamp;
}

export function kubernetesBackend(kubeConfig: KubeConfig): Backend {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const version = kubeConfig.makeApiClient(VersionApi);
  const exec = () => new Exec(kubeConfig);

  async function readPod(namespace: string, name: string): Promise<V1Pod> {
    try {
      return await core.readNamespacedPod({ namespace, name });
    } catch (error) {
      if (isNotFound(error)) throw new NotFoundError(`no pod ${namespace}/${name}`);
      throw error;
    }
  }

  /**
   * A workload's instance number to a pod, through ownership (ownerReferences with controller: true,
   * matched by uid), never by labels or names alone: a pod that merely carries a Deployment's labels
   * or a StatefulSet's naming is not its instance. StatefulSet: pod <name>-<instance> (stable across
   * restarts), controlled by the StatefulSet. Deployment: the running pods controlled by a ReplicaSet
   * the Deployment controls (how the Deployment controller owns them: kubernetes/kubernetes
   * pkg/controller/deployment), ordered by creation time, then name; instance n is the n-th
   * (0-based). A bare name tries a StatefulSet first, then a Deployment.
   */
  async function workloadPod(namespace: string, workload: string, instance: number): Promise<V1Pod> {
    const [kind, name] = workload.includes("/") ? (workload.split("/") as [string, string]) : ["", workload];
    if (kind !== "deployment") {
      try {
        const statefulSet = await apps.readNamespacedStatefulSet({ namespace, name });
        const pod = await readPod(namespace, `${name}-${instance}`);
        if (!controlledBy(pod, statefulSet))
          throw new NotFoundError(`pod ${namespace}/${name}-${instance} does not belong to statefulset ${name}`);
        return pod;
      } catch (error) {
        if (!isNotFound(error) || kind === "statefulset") throw error;
      }
    }
    let deployment;
    try {
      deployment = await apps.readNamespacedDeployment({ namespace, name });
    } catch (error) {
      if (isNotFound(error)) throw new NotFoundError(`no workload ${namespace}/${workload}`);
      throw error;
    }
    // matchLabels only narrows the lists (its pods carry them); ownership decides.
    const labelSelector = Object.entries(deployment.spec?.selector?.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const narrowed = labelSelector ? { labelSelector } : {};
    const replicaSets = (await apps.listNamespacedReplicaSet({ namespace, ...narrowed })).items.filter((rs) =>
      controlledBy(rs, deployment),
    );
    const pods = (await core.listNamespacedPod({ namespace, ...narrowed })).items.filter(
      (pod) => isRunning(pod) && replicaSets.some((rs) => controlledBy(pod, rs)),
    );
    pods.sort((a, b) => {
      const byTime = (a.metadata?.creationTimestamp?.getTime() ?? 0) - (b.metadata?.creationTimestamp?.getTime() ?? 0);
      return byTime !== 0 ? byTime : (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? "");
    });
    const pod = pods[instance];
    if (!pod)
      throw new NotFoundError(
        `deployment ${namespace}/${name} has ${pods.length} running pods, no instance ${instance}`,
      );
    return pod;
  }

  /** Runs an exec; resolves once the WebSocket closes, with the exit code if a status arrived. */
  async function startExec(
    target: ResolvedTarget,
    command: string[],
    output: { stdout: Writable; stderr: Writable | null },
    stdin: PassThrough | null,
    tty: boolean,
    onEnd: (result: { exitCode: number | null; error?: string }) => void,
  ) {
    let status: V1Status | undefined;
    const socket = await exec().exec(
      target.namespace!,
      target.pod!,
      target.container,
      command,
      output.stdout,
      output.stderr,
      stdin,
      tty,
      (s) => {
        status = s;
      },
    );
    let ended = false;
    const end = (error?: string) => {
      if (ended) return;
      ended = true;
      const exitCode = status ? exitCodeFromStatus(status) : null;
      const statusError = status && status.status !== "Success" && exitCode === null ? status.message : undefined;
      const message = error ?? statusError;
      onEnd(message ? { exitCode, error: message } : { exitCode });
    };
    socket.on("close", () => end());
    socket.on("error", (error) => end(error.message));
    return socket;
  }

  /** A Writable that hands each chunk to `sink`; client-node ends it on the status message, so a late write must not crash the gateway. */
  function outputSink(sink: (chunk: Buffer) => void): Writable {
    const writable = new Writable({
      write(chunk: Buffer, _encoding, done) {
        sink(chunk);
        done();
      },
    });
    writable.on("error", () => {});
    return writable;
  }

  const debugContainers = {
    async create(target, image, lifetimeSeconds) {
      const namespace = target.namespace!;
      const pod = target.pod!;
      const name = `entryway-debug-${randomBytes(4).toString("hex")}`;
      const targetContext = (await readPod(namespace, pod)).spec?.containers.find(
        (c) => c.name === target.container,
      )?.securityContext;
      const sameUser = {
        ...(targetContext?.runAsUser !== undefined ? { runAsUser: targetContext.runAsUser } : {}),
        ...(targetContext?.runAsGroup !== undefined ? { runAsGroup: targetContext.runAsGroup } : {}),
      };
      // `sleep` as the main process: the sessions exec into the container (the usual wrapper, so the
      // reaper works there too), and it ends by itself once no session can still use it.
      const container: V1EphemeralContainer = {
        name,
        image,
        command: ["sleep", String(lifetimeSeconds)],
        targetContainerName: target.container,
        securityContext: {
          runAsNonRoot: true,
          ...sameUser,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
          seccompProfile: { type: "RuntimeDefault" },
        },
      };
      try {
        await core.patchNamespacedPodEphemeralcontainers(
          { namespace, name: pod, body: { spec: { ephemeralContainers: [container] } } },
          setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
        );
      } catch (error) {
        if (isNotFound(error))
          throw new NotFoundError(`no pod ${namespace}/${pod}, or ephemeral containers are off in this cluster`);
        throw error;
      }
      return { namespace, pod, container: name, label: `${namespace}/${pod}/${name}` };
    },

    async waitUntilRunning(debugTarget, timeoutMs, signal) {
      const deadline = Date.now() + timeoutMs;
      let last = "no status yet";
      while (!signal.aborted) {
        const pod = await readPod(debugTarget.namespace!, debugTarget.pod!);
        const state = pod.status?.ephemeralContainerStatuses?.find((s) => s.name === debugTarget.container)?.state;
        if (state?.running) return;
        if (state?.terminated)
          throw new DebugContainerError(
            `debug container ${debugTarget.container} ended (${state.terminated.reason ?? `exit code ${state.terminated.exitCode}`})`,
          );
        if (state?.waiting)
          last = [state.waiting.reason, state.waiting.message].filter(Boolean).join(": ") || "waiting";
        if (Date.now() >= deadline)
          throw new DebugContainerError(
            `debug container ${debugTarget.container} did not start within ${Math.round(timeoutMs / 1000)} s (${last})`,
          );
        await sleep(Math.min(DEBUG_POLL_MS, Math.max(0, deadline - Date.now())));
      }
    },
  } satisfies DebugContainers;

  return {
    name: "kubernetes",
    debugContainers,

    async resolve(target: Target): Promise<ResolvedTarget> {
      if (target.kind === "docker")
        throw new NotFoundError("the Kubernetes backend takes a namespace and a pod or workload");
      const pod =
        target.kind === "pod"
          ? await readPod(target.namespace, target.pod)
          : await workloadPod(target.namespace, target.workload, target.instance);
      const name = pod.metadata!.name!;
      if (!isRunning(pod)) throw new NotFoundError(`pod ${target.namespace}/${name} is not running`);
      const containers = (pod.spec?.containers ?? []).map((c) => c.name);
      const container =
        target.container ?? pod.metadata?.annotations?.["kubectl.kubernetes.io/default-container"] ?? containers[0];
      if (!container || !containers.includes(container))
        throw new NotFoundError(`pod ${target.namespace}/${name} has no container ${container ?? ""}`);
      return { namespace: target.namespace, pod: name, container, label: `${target.namespace}/${name}/${container}` };
    },

    async exec(target, command, size, handlers, { tty } = { tty: true }): Promise<ExecControl> {
      // A stdout with rows/columns that emits 'resize' is what makes client-node send channel-4 resizes.
      const stdout = Object.assign(
        outputSink((chunk) => handlers.onOutput(chunk, "stdout")),
        tty ? { rows: size.rows, columns: size.cols } : {},
      );
      const stderr = tty ? null : outputSink((chunk) => handlers.onOutput(chunk, "stderr"));
      const stdin = new PassThrough();
      const socket = await startExec(target, command, { stdout, stderr }, stdin, tty, (result) =>
        handlers.onEnd(result),
      );
      return {
        write: (data, written) => void stdin.write(data, written && (() => written())),
        closeStdin: () => {
          // client-node ends stdin with the v5 CLOSE signal (channel 255, then the stream number 0: KEP-4006,
          // kubernetes staging/src/k8s.io/apimachinery/pkg/util/remotecommand/constants.go). Under v4 it would
          // close the whole WebSocket instead, losing the rest of the output and the exit code
          // (client-node web-socket-handler.js handleStandardInput): there stdin stays open.
          if (socket.protocol === "v5.channel.k8s.io") stdin.end();
        },
        resize: async (cols, rows) => {
          if (!tty) return;
          // Channel 4 shares the WebSocket with stdin, so later input cannot overtake it.
          stdout.columns = cols;
          stdout.rows = rows;
          stdout.emit("resize");
        },
        pause: () => socket.pause(),
        resume: () => socket.resume(),
        close: () => socket.close(),
      };
    },

    async run(target, command, { signal } = {}) {
      signal?.throwIfAborted();
      const sink = outputSink(() => {});
      return new Promise<number | null>((resolve, reject) => {
        const aborted = () => reject(signal!.reason);
        signal?.addEventListener("abort", aborted, { once: true });
        startExec(target, command, { stdout: sink, stderr: sink }, null, false, (result) => {
          signal?.removeEventListener("abort", aborted);
          resolve(result.exitCode);
        }).then((socket) => {
          if (signal?.aborted) socket.close();
          else signal?.addEventListener("abort", () => socket.close(), { once: true });
        }, reject);
      });
    },

    async list({ namespace }) {
      let pods: V1Pod[];
      try {
        pods = namespace
          ? (await core.listNamespacedPod({ namespace })).items
          : (await core.listPodForAllNamespaces()).items;
      } catch (error) {
        // A namespace the gateway has no Role in holds nothing it could enter.
        if (namespace && error instanceof ApiException && error.code === 403) return [];
        throw error;
      }
      return pods.filter(isRunning).map((pod) => ({
        target: { kind: "pod" as const, namespace: pod.metadata!.namespace!, pod: pod.metadata!.name! },
        containers: (pod.spec?.containers ?? []).map((container) => container.name),
      }));
    },

    async check() {
      await version.getCode();
    },
  } satisfies Backend;
}
