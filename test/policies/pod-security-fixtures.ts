/**
 * Pods for `entryway-pod-security-restricted`, each one Pod Security Standards "restricted" check
 * (k8s.io/pod-security-admission v0.37.2 policy/check_*.go) broken one way: the rule's tests
 * (policies/rules/pod-security-restricted.test.ts) expect the rule's message for each, and
 * test/real/pod-security.test.ts has the real API server's Pod Security admission refuse each at
 * `restricted` (with the check's reason) and admit it at `privileged`, so that it is the admission
 * check, not the API's validation, that refuses it. The admitted pods pass both.
 */
import { restrictedContainer, type Obj } from "./fixtures";

/** A pod that meets "restricted". */
export function restrictedPod(): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "pss", labels: { "app.kubernetes.io/name": "demo" }, annotations: {} },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } },
      containers: [{ name: "c", image: "registry.example.com/app:1", securityContext: restrictedContainer() }],
    },
  };
}

const container = (pod: Obj): Obj => pod.spec.containers[0];
const context = (pod: Obj): Obj => container(pod).securityContext;

export interface PodSecurityCase {
  /** What breaks "restricted". */
  readonly name: string;
  readonly change: (pod: Obj) => void;
  /** The rule's message. */
  readonly rule: RegExp;
  /** Pod Security admission's reason (the check's ForbiddenReason). */
  readonly admission: string;
  /**
   * The API's own validation refuses it first on an API server without --allow-privileged (the
   * default, and test/real's): privileged and hostProcess containers are "disallowed by cluster
   * policy" (k8s.io/kubernetes pkg/apis/core/validation/validation.go), at any Pod Security level.
   */
  readonly refusedByValidation?: boolean;
}

export const REFUSED: readonly PodSecurityCase[] = [
  // check_privileged.go
  {
    name: "a privileged container",
    change: (p) => {
      context(p).privileged = true;
      delete context(p).allowPrivilegeEscalation; // the API refuses privileged with it false
    },
    rule: /container "c": privileged is not allowed/,
    admission: "privileged",
    refusedByValidation: true,
  },
  {
    name: "a privileged init container",
    change: (p) =>
      (p.spec.initContainers = [
        {
          name: "init",
          image: "registry.example.com/app:1",
          securityContext: { ...restrictedContainer(), allowPrivilegeEscalation: undefined, privileged: true },
        },
      ]),
    rule: /container "init": privileged is not allowed/,
    admission: "privileged",
    refusedByValidation: true,
  },
  // check_allowPrivilegeEscalation.go
  {
    name: "privilege escalation",
    change: (p) => (context(p).allowPrivilegeEscalation = true),
    rule: /allowPrivilegeEscalation must be false/,
    admission: "allowPrivilegeEscalation != false",
  },
  // check_capabilities_restricted.go
  {
    name: "capabilities not dropped",
    change: (p) => (context(p).capabilities = {}),
    rule: /capabilities must drop ALL/,
    admission: "unrestricted capabilities",
  },
  {
    name: "an added capability",
    change: (p) => (context(p).capabilities = { drop: ["ALL"], add: ["NET_ADMIN"] }),
    rule: /adding capability NET_ADMIN is not allowed/,
    admission: "unrestricted capabilities",
  },
  {
    // The attack (issue 33): any pod could label itself a workspace and name a container sshd.
    name: "SETUID, SETGID and SYS_CHROOT on a container named sshd in a pod labelled ssh-workspace",
    change: (p) => {
      p.metadata.labels["app.kubernetes.io/name"] = "ssh-workspace";
      container(p).name = "sshd";
      context(p).capabilities = { drop: ["ALL"], add: ["SETUID", "SETGID", "SYS_CHROOT"] };
    },
    rule: /container "sshd": adding capability SETUID is not allowed/,
    admission: "unrestricted capabilities",
  },
  // check_runAsNonRoot.go
  {
    name: "a container's runAsNonRoot: false under a pod that says true",
    change: (p) => (context(p).runAsNonRoot = false),
    rule: /runAsNonRoot must be true \(the container sets false, which wins over the pod\)/,
    admission: "runAsNonRoot != true",
  },
  {
    name: "runAsNonRoot set nowhere",
    change: (p) => {
      delete p.spec.securityContext.runAsNonRoot;
      delete context(p).runAsNonRoot;
    },
    rule: /container "c": runAsNonRoot must be true/,
    admission: "runAsNonRoot != true",
  },
  // check_runAsUser.go
  {
    name: "a container running as root",
    change: (p) => (context(p).runAsUser = 0),
    rule: /container "c": runs as root/,
    admission: "runAsUser=0",
  },
  // check_seccompProfile_restricted.go
  {
    name: "a container's seccomp Unconfined",
    change: (p) => (context(p).seccompProfile = { type: "Unconfined" }),
    rule: /container "c": seccompProfile must be RuntimeDefault or Localhost/,
    admission: "seccompProfile",
  },
  {
    name: "the pod's seccomp Unconfined, its container's RuntimeDefault",
    change: (p) => (p.spec.securityContext.seccompProfile = { type: "Unconfined" }),
    rule: /seccompProfile Unconfined is not allowed/,
    admission: "seccompProfile",
  },
  {
    name: "seccomp set nowhere",
    change: (p) => {
      delete p.spec.securityContext.seccompProfile;
      delete context(p).seccompProfile;
    },
    rule: /seccompProfile must be RuntimeDefault or Localhost/,
    admission: "seccompProfile",
  },
  // check_seLinuxOptions.go
  {
    name: "seLinuxOptions.type spc_t",
    change: (p) => (context(p).seLinuxOptions = { type: "spc_t" }),
    rule: /seLinuxOptions.type spc_t is not allowed/,
    admission: "seLinuxOptions",
  },
  {
    name: "the pod's seLinuxOptions.user",
    change: (p) => (p.spec.securityContext.seLinuxOptions = { user: "system_u" }),
    rule: /seLinuxOptions.user may not be set/,
    admission: "seLinuxOptions",
  },
  // check_appArmorProfile.go
  {
    name: "a container's appArmorProfile Unconfined",
    change: (p) => (context(p).appArmorProfile = { type: "Unconfined" }),
    rule: /container "c": AppArmor profile Unconfined is not allowed/,
    admission: "forbidden AppArmor profile",
  },
  {
    name: "the pod's appArmorProfile Unconfined",
    change: (p) => (p.spec.securityContext.appArmorProfile = { type: "Unconfined" }),
    rule: /Pod pss: AppArmor profile Unconfined is not allowed/,
    admission: "forbidden AppArmor profile",
  },
  {
    name: "the deprecated AppArmor annotation, unconfined",
    change: (p) => (p.metadata.annotations["container.apparmor.security.beta.kubernetes.io/c"] = "unconfined"),
    rule: /annotation container.apparmor.security.beta.kubernetes.io\/c=unconfined/,
    admission: "forbidden AppArmor profile",
  },
  // check_windowsHostProcess.go (the API requires hostNetwork with it: check_hostNamespaces fires too)
  {
    name: "windowsOptions.hostProcess",
    change: (p) => {
      p.spec.hostNetwork = true;
      context(p).windowsOptions = { hostProcess: true };
    },
    rule: /windowsOptions.hostProcess is not allowed/,
    admission: "hostProcess",
    refusedByValidation: true,
  },
  // check_hostNamespaces.go
  {
    name: "hostNetwork",
    change: (p) => (p.spec.hostNetwork = true),
    rule: /hostNetwork is not allowed/,
    admission: "host namespaces",
  },
  {
    name: "hostPID",
    change: (p) => (p.spec.hostPID = true),
    rule: /hostPID is not allowed/,
    admission: "host namespaces",
  },
  // check_hostPathVolumes.go and check_restrictedVolumes.go
  {
    name: "a hostPath volume",
    change: (p) => (p.spec.volumes = [{ name: "root", hostPath: { path: "/" } }]),
    rule: /hostPath volume "root" is not allowed/,
    admission: "restricted volume types", // restricted's check overrides baseline's hostPathVolumes
  },
  {
    name: "an nfs volume",
    change: (p) => (p.spec.volumes = [{ name: "share", nfs: { server: "nfs.example.com", path: "/" } }]),
    rule: /volume "share" of type nfs is not allowed/,
    admission: "restricted volume types",
  },
  // check_hostPorts.go
  {
    name: "a host port",
    change: (p) => (container(p).ports = [{ containerPort: 8080, hostPort: 8080 }]),
    rule: /hostPort 8080 is not allowed/,
    admission: "hostPort",
  },
  // check_sysctls.go
  {
    name: "an unsafe sysctl",
    change: (p) => (p.spec.securityContext.sysctls = [{ name: "kernel.msgmax", value: "1" }]),
    rule: /sysctl kernel.msgmax is not allowed/,
    admission: "forbidden sysctls",
  },
  // check_hostProbesAndhostLifecycle.go
  {
    name: "a probe on another host",
    change: (p) => (container(p).livenessProbe = { httpGet: { host: "169.254.169.254", path: "/", port: 80 } }),
    rule: /probe or lifecycle handler on host 169.254.169.254/,
    admission: "probe or lifecycle host",
  },
];

/** Pods "restricted" admits, at its edges. */
export const ADMITTED: readonly { name: string; change: (pod: Obj) => void }[] = [
  { name: "the restricted pod", change: () => {} },
  {
    name: "NET_BIND_SERVICE, a safe sysctl, the allowed volume types and SELinux type",
    change: (p) => {
      context(p).capabilities = { drop: ["ALL"], add: ["NET_BIND_SERVICE"] };
      context(p).seLinuxOptions = { type: "container_t", level: "s0:c1,c2" };
      context(p).appArmorProfile = { type: "RuntimeDefault" };
      p.spec.securityContext.sysctls = [{ name: "net.ipv4.tcp_syncookies", value: "1" }];
      p.spec.volumes = [
        { name: "tmp", emptyDir: {} },
        { name: "data", persistentVolumeClaim: { claimName: "data" } },
        { name: "token", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } },
      ];
    },
  },
  {
    name: "runAsNonRoot on each container, not on the pod, and seccomp on the container only",
    change: (p) => {
      delete p.spec.securityContext.runAsNonRoot;
      delete p.spec.securityContext.seccompProfile;
    },
  },
];
