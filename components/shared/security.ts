/**
 * Pod Security "restricted" contexts shared by every workload: non-root, no privilege
 * escalation, every capability dropped, the runtime's default seccomp profile, and a
 * read-only root filesystem unless the program must write to it.
 */
import type * as k8s from "@pulumi/kubernetes";

type PodSecurityContext = k8s.types.input.core.v1.PodSecurityContext;
type SecurityContext = k8s.types.input.core.v1.SecurityContext;

/** @internal */
export interface RunAs {
  /** The numeric user; images must not rely on a user name for runAsNonRoot to hold. */
  readonly user: number;
  readonly group?: number;
  /** The group that owns mounted volumes. */
  readonly fsGroup?: number;
}

/** @internal */
export function restrictedPodSecurityContext(runAs: RunAs): PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: runAs.user,
    runAsGroup: runAs.group ?? runAs.user,
    fsGroup: runAs.fsGroup ?? runAs.group ?? runAs.user,
    fsGroupChangePolicy: "OnRootMismatch",
    seccompProfile: { type: "RuntimeDefault" },
  };
}

/**
 * The pod-level context of a pod whose one container is Istio's proxy (a gateway with
 * `image: auto`): restricted, with the proxy's uid and gid left to the istio-proxy container, where
 * Istio's gateway injection template sets them (istio-discovery/files/gateway-injection-template.yaml).
 * A pod-level runAsUser 1337 is what `istioctl analyze` reports as IST0144 (istio
 * pkg/config/analysis/analyzers/deployment/pod.go exempts only the container named istio-proxy):
 * an application running as the proxy's uid escapes the sidecar's traffic capture.
 * @internal
 */
export function proxyPodSecurityContext(proxyUid: number): PodSecurityContext {
  const { runAsUser: _user, runAsGroup: _group, ...context } = restrictedPodSecurityContext({ user: proxyUid });
  return context;
}

/** @internal */
export interface ContainerSecurityOptions {
  /** Defaults to true; turn off only for programs that write outside their volumes. */
  readonly readOnlyRootFilesystem?: boolean;
  /** Capabilities a program needs back after dropping ALL (e.g. sshd's setuid). */
  readonly addCapabilities?: string[];
  readonly runAs?: RunAs;
}

/** @internal */
export function restrictedContainerSecurityContext(options: ContainerSecurityOptions = {}): SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    privileged: false,
    readOnlyRootFilesystem: options.readOnlyRootFilesystem ?? true,
    runAsNonRoot: true,
    ...(options.runAs ? { runAsUser: options.runAs.user, runAsGroup: options.runAs.group ?? options.runAs.user } : {}),
    capabilities: {
      drop: ["ALL"],
      ...(options.addCapabilities?.length ? { add: options.addCapabilities } : {}),
    },
    seccompProfile: { type: "RuntimeDefault" },
  };
}
