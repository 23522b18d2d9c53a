/**
 * `entryway-pod-security-restricted`, mandatory: every workload (Pod, Deployment, StatefulSet,
 * DaemonSet, ReplicaSet, Job, CronJob) meets the Pod Security Standards' "restricted" profile as
 * Pod Security admission checks it, check by check (k8s.io/pod-security-admission v0.37.2,
 * policy/check_*.go, at the latest version: restricted is baseline's checks plus its own, where a
 * restricted check overrides its baseline namesake). No exception: the SSH workspaces' sshd runs as
 * an unprivileged user without capabilities (docs/ssh-workspaces.md), and nothing the components or
 * the chart make adds one but NET_BIND_SERVICE.
 *
 * Where the two differ: none by design; the rule reads the pod template of every workload kind,
 * where admission checks the pod (and, for warnings, the template) when it is created.
 * test/real/pod-security.test.ts has the real API server refuse every fixture the rule refuses.
 *
 * Upstream: https://kubernetes.io/docs/concepts/security/pod-security-standards/ ("Baseline",
 * "Restricted"), and the checks named on each function below.
 */
import { containersOf, label, podTemplate, resourcePolicy, type K8sObject, type Obj } from "./helpers";

/** check_capabilities_restricted.go: restricted allows adding only this capability. */
const RESTRICTED_ADD = ["NET_BIND_SERVICE"];
/** check_restrictedVolumes.go: the volume types restricted allows. */
const RESTRICTED_VOLUME_TYPES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "image",
  "persistentVolumeClaim",
  "projected",
  "secret",
];
/** check_sysctls.go (sysctlsAllowedV1Dot37): the sysctls baseline (and so restricted) allows. */
const SAFE_SYSCTLS = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
  "net.ipv4.tcp_slow_start_after_idle",
  "net.ipv4.tcp_notsent_lowat",
];
/** check_seLinuxOptions.go (selinuxAllowedTypes1_31): the SELinux types baseline allows. */
const SELINUX_TYPES = ["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];
/** check_appArmorProfile.go: the AppArmor profile types baseline allows. */
const APPARMOR_TYPES = ["RuntimeDefault", "Localhost"];
/** check_seccompProfile_baseline.go validSeccomp. */
const SECCOMP_TYPES = ["RuntimeDefault", "Localhost"];
/** The deprecated per-container AppArmor annotation (check_appArmorProfile.go allowedAnnotationValue). */
const APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";

type Check = (where: string, pod: Obj, metadata: Obj, containers: Obj[]) => string[];
const scOf = (o: Obj): Obj => o.securityContext ?? {};
const named = (where: string, c: Obj) => `${where} container "${c.name}"`;
/** A pod that runs in a user namespace (hostUsers: false): runAsNonRoot and runAsUser are relaxed (helpers.go relaxPolicyForUserNamespacePod). */
const userNamespaced = (pod: Obj) => pod.hostUsers === false;
/** Windows pods cannot set these fields: allowPrivilegeEscalation, seccomp and capabilities are not asked of them (the 1.25 checks). */
const windows = (pod: Obj) => pod.os?.name === "windows";

/** The checks of "restricted" at the latest version, in check_*.go's names. */
const CHECKS: Record<string, Check> = {
  // check_hostNamespaces.go
  hostNamespaces: (where, pod) =>
    ["hostNetwork", "hostPID", "hostIPC"].filter((f) => pod[f] === true).map((f) => `${where}: ${f} is not allowed`),
  // check_privileged.go
  privileged: (where, _pod, _m, containers) =>
    containers.filter((c) => scOf(c).privileged === true).map((c) => `${named(where, c)}: privileged is not allowed`),
  // check_hostPathVolumes.go and check_restrictedVolumes.go
  volumes: (where, pod) =>
    ((pod.volumes ?? []) as Obj[]).flatMap((volume) =>
      volume.hostPath
        ? [`${where}: hostPath volume "${volume.name}" is not allowed`]
        : Object.keys(volume)
            .filter((kind) => kind !== "name" && !RESTRICTED_VOLUME_TYPES.includes(kind))
            .map((kind) => `${where}: volume "${volume.name}" of type ${kind} is not allowed under "restricted"`),
    ),
  // check_sysctls.go
  sysctls: (where, pod) =>
    ((scOf(pod).sysctls ?? []) as Obj[])
      .filter((s) => !SAFE_SYSCTLS.includes(s.name))
      .map((s) => `${where}: sysctl ${s.name} is not allowed`),
  // check_procMount_restricted.go (procMount_1_0: no relaxation under restricted)
  procMount: (where, _pod, _m, containers) =>
    containers
      .filter((c) => scOf(c).procMount !== undefined && scOf(c).procMount !== "Default")
      .map((c) => `${named(where, c)}: procMount ${scOf(c).procMount} is not allowed`),
  // check_hostPorts.go
  hostPorts: (where, _pod, _m, containers) =>
    containers.flatMap((c) =>
      ((c.ports ?? []) as Obj[])
        .filter((p) => p.hostPort)
        .map((p) => `${named(where, c)}: hostPort ${p.hostPort} is not allowed`),
    ),
  // check_hostProbesAndhostLifecycle.go
  hostProbesAndHostLifecycle: (where, _pod, _m, containers) =>
    containers.flatMap((c) =>
      [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop]
        .flatMap((handler: Obj | undefined) => [handler?.httpGet?.host, handler?.tcpSocket?.host])
        .filter((host) => host)
        .map((host) => `${named(where, c)}: a probe or lifecycle handler on host ${host} is not allowed`),
    ),
  // check_appArmorProfile.go
  appArmorProfile: (where, pod, metadata, containers) => [
    ...[{ name: undefined, securityContext: scOf(pod) }, ...containers]
      .filter(
        (c) => c.securityContext?.appArmorProfile && !APPARMOR_TYPES.includes(c.securityContext.appArmorProfile.type),
      )
      .map(
        (c) =>
          `${c.name === undefined ? where : named(where, c)}: AppArmor profile ${c.securityContext.appArmorProfile.type} is not allowed (RuntimeDefault or Localhost)`,
      ),
    ...Object.entries((metadata.annotations ?? {}) as Record<string, string>)
      .filter(
        ([k, v]) =>
          k.startsWith(APPARMOR_ANNOTATION) && !(v === "" || v === "runtime/default" || v.startsWith("localhost/")),
      )
      .map(([k, v]) => `${where}: annotation ${k}=${v} sets an AppArmor profile that is not allowed`),
  ],
  // check_seLinuxOptions.go
  seLinuxOptions: (where, pod, _m, containers) =>
    [{ name: undefined, securityContext: scOf(pod) }, ...containers]
      .filter((c) => c.securityContext?.seLinuxOptions)
      .flatMap((c) => {
        const o: Obj = c.securityContext.seLinuxOptions;
        const who = c.name === undefined ? where : named(where, c);
        return [
          ...(SELINUX_TYPES.includes(o.type ?? "")
            ? []
            : [`${who}: seLinuxOptions.type ${o.type} is not allowed (${SELINUX_TYPES.filter(Boolean).join(", ")})`]),
          ...(o.user ? [`${who}: seLinuxOptions.user may not be set`] : []),
          ...(o.role ? [`${who}: seLinuxOptions.role may not be set`] : []),
        ];
      }),
  // check_windowsHostProcess.go
  windowsHostProcess: (where, pod, _m, containers) =>
    [{ name: undefined, securityContext: scOf(pod) }, ...containers]
      .filter((c) => c.securityContext?.windowsOptions?.hostProcess === true)
      .map((c) => `${c.name === undefined ? where : named(where, c)}: windowsOptions.hostProcess is not allowed`),
  // check_allowPrivilegeEscalation.go
  allowPrivilegeEscalation: (where, pod, _m, containers) =>
    windows(pod)
      ? []
      : containers
          .filter((c) => scOf(c).allowPrivilegeEscalation !== false)
          .map((c) => `${named(where, c)}: allowPrivilegeEscalation must be false`),
  // check_runAsNonRoot.go: a container's runAsNonRoot: false wins over the pod's true
  runAsNonRoot: (where, pod, _m, containers) => {
    if (userNamespaced(pod)) return [];
    const podValue = scOf(pod).runAsNonRoot;
    return [
      ...(podValue === false ? [`${where}: the pod sets runAsNonRoot: false`] : []),
      ...containers
        .filter((c) => (scOf(c).runAsNonRoot ?? (podValue === true ? true : undefined)) !== true)
        .map((c) =>
          scOf(c).runAsNonRoot === false
            ? `${named(where, c)}: runAsNonRoot must be true (the container sets false, which wins over the pod)`
            : `${named(where, c)}: runAsNonRoot must be true`,
        ),
    ];
  },
  // check_runAsUser.go
  runAsUser: (where, pod, _m, containers) =>
    userNamespaced(pod)
      ? []
      : [
          ...(scOf(pod).runAsUser === 0 ? [`${where}: the pod runs as root (runAsUser 0)`] : []),
          ...containers
            .filter((c) => scOf(c).runAsUser === 0)
            .map((c) => `${named(where, c)}: runs as root (runAsUser 0)`),
        ],
  // check_seccompProfile_restricted.go: a bad type anywhere is refused; unset needs the pod's
  seccompProfile: (where, pod, _m, containers) => {
    if (windows(pod)) return [];
    const podType = scOf(pod).seccompProfile?.type;
    const bad = (type: string | undefined) => type !== undefined && !SECCOMP_TYPES.includes(type);
    return [
      ...(bad(podType) ? [`${where}: seccompProfile ${podType} is not allowed (RuntimeDefault or Localhost)`] : []),
      ...containers
        .filter((c) => {
          const type = scOf(c).seccompProfile?.type;
          return bad(type) || (type === undefined && (podType === undefined || bad(podType)));
        })
        .map((c) => `${named(where, c)}: seccompProfile must be RuntimeDefault or Localhost`),
    ];
  },
  // check_capabilities_restricted.go
  capabilities: (where, pod, _m, containers) =>
    windows(pod)
      ? []
      : containers.flatMap((c) => [
          ...((scOf(c).capabilities?.drop ?? []).includes("ALL")
            ? []
            : [`${named(where, c)}: capabilities must drop ALL`]),
          ...((scOf(c).capabilities?.add ?? []) as string[])
            .filter((cap) => !RESTRICTED_ADD.includes(cap))
            .map((cap) => `${named(where, c)}: adding capability ${cap} is not allowed`),
        ]),
};

export function checkPodSecurityRestricted(o: K8sObject): string[] {
  const template = podTemplate(o);
  if (!template) return [];
  const pod = template.spec ?? {};
  const containers = containersOf(pod);
  return Object.values(CHECKS).flatMap((check) => check(label(o), pod, template.metadata ?? {}, containers));
}

export const podSecurityRestricted = resourcePolicy(
  "entryway-pod-security-restricted",
  'Every workload meets Pod Security "restricted", check by check as Pod Security admission applies it.',
  "mandatory",
  checkPodSecurityRestricted,
);
