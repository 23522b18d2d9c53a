/**
 * `entryway-pod-security-restricted`, mandatory: every workload (Pod, Deployment, StatefulSet,
 * DaemonSet, ReplicaSet, Job, CronJob) meets the Pod Security Standards' "restricted" profile: no
 * privileged containers, privilege escalation, root, host namespaces, host ports, hostPath or other
 * volume types outside the profile's list, unsafe sysctls or unmasked /proc; seccomp RuntimeDefault
 * or Localhost; every capability dropped and none added but NET_BIND_SERVICE.
 *
 * One documented exception (docs/policy-pack.md): a container named "sshd" in a workload labelled
 * app.kubernetes.io/name=ssh-workspace may add SETUID, SETGID, SYS_CHROOT and AUDIT_WRITE, which a
 * multi-user sshd that switches users needs; everything else of "restricted" still applies to it.
 *
 * Upstream: https://kubernetes.io/docs/concepts/security/pod-security-standards/ ("Restricted",
 * and the "Baseline" controls it includes: host namespaces, hostPath, host ports, sysctls, /proc
 * mount type, volume types, capabilities, seccomp).
 */
import { containersOf, label, podTemplate, resourcePolicy, type K8sObject, type Obj } from "./helpers";

/**
 * The documented Pod Security exception for sshd: a container named "sshd" in a workload labelled
 * app.kubernetes.io/name=ssh-workspace may add back these capabilities (a multi-user sshd that
 * switches users needs them). Everything else of "restricted" still applies to it.
 */
export const SSHD_EXCEPTION_CAPABILITIES = ["AUDIT_WRITE", "SETGID", "SETUID", "SYS_CHROOT"];
/** Pod Security "restricted" allows adding only this capability. */
const RESTRICTED_ADD = ["NET_BIND_SERVICE"];

/** The volume types Pod Security "restricted" allows. */
const RESTRICTED_VOLUME_TYPES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];
/** The sysctls Pod Security "baseline" (and so "restricted") allows. */
const SAFE_SYSCTLS = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
];
const podContextOf = (pod: Obj): Obj => pod.securityContext ?? {};

export function checkPodSecurityRestricted(o: K8sObject): string[] {
  const template = podTemplate(o);
  if (!template) return [];
  const pod = template.spec ?? {};
  const problems: string[] = [];
  const where = label(o);
  for (const field of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (pod[field] === true) problems.push(`${where}: ${field} is not allowed`);
  }
  for (const volume of pod.volumes ?? []) {
    if (volume.hostPath) problems.push(`${where}: hostPath volume "${volume.name}" is not allowed`);
    else {
      const kinds = Object.keys(volume).filter((key) => key !== "name");
      for (const kind of kinds) {
        if (!RESTRICTED_VOLUME_TYPES.includes(kind))
          problems.push(`${where}: volume "${volume.name}" of type ${kind} is not allowed under "restricted"`);
      }
    }
  }
  for (const sysctl of podContextOf(pod).sysctls ?? []) {
    if (!SAFE_SYSCTLS.includes(sysctl.name)) problems.push(`${where}: sysctl ${sysctl.name} is not allowed`);
  }
  const podContext = pod.securityContext ?? {};
  if (podContext.runAsUser === 0) problems.push(`${where}: the pod runs as root (runAsUser 0)`);
  const isSshWorkspace =
    template.metadata?.labels?.["app.kubernetes.io/name"] === "ssh-workspace" ||
    o.metadata?.labels?.["app.kubernetes.io/name"] === "ssh-workspace";
  for (const container of containersOf(pod)) {
    const c = container.securityContext ?? {};
    const name = `${where} container "${container.name}"`;
    if (c.privileged === true) problems.push(`${name}: privileged is not allowed`);
    if (c.allowPrivilegeEscalation !== false) problems.push(`${name}: allowPrivilegeEscalation must be false`);
    if (c.runAsNonRoot !== true && podContext.runAsNonRoot !== true)
      problems.push(`${name}: runAsNonRoot must be true`);
    if (c.runAsUser === 0) problems.push(`${name}: runs as root (runAsUser 0)`);
    if (c.procMount && c.procMount !== "Default") problems.push(`${name}: procMount ${c.procMount} is not allowed`);
    for (const port of container.ports ?? []) {
      if (port.hostPort) problems.push(`${name}: hostPort ${port.hostPort} is not allowed`);
    }
    const seccomp = c.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost")
      problems.push(`${name}: seccompProfile must be RuntimeDefault or Localhost`);
    const drop: string[] = c.capabilities?.drop ?? [];
    if (!drop.includes("ALL")) problems.push(`${name}: capabilities must drop ALL`);
    const allowed =
      isSshWorkspace && container.name === "sshd"
        ? [...RESTRICTED_ADD, ...SSHD_EXCEPTION_CAPABILITIES]
        : RESTRICTED_ADD;
    for (const cap of (c.capabilities?.add ?? []) as string[]) {
      if (!allowed.includes(cap)) {
        problems.push(
          `${name}: adding capability ${cap} is not allowed` +
            (SSHD_EXCEPTION_CAPABILITIES.includes(cap)
              ? " (only an ssh-workspace's sshd container may, see docs/policy-pack.md)"
              : ""),
        );
      }
    }
  }
  return problems;
}

export const podSecurityRestricted = resourcePolicy(
  "entryway-pod-security-restricted",
  'Every workload meets Pod Security "restricted" (an ssh-workspace\'s sshd container may add SETUID, SETGID, SYS_CHROOT, AUDIT_WRITE).',
  "mandatory",
  checkPodSecurityRestricted,
);
