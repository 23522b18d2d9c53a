// SshWorkspace's public types: the enums and interfaces of its args (the component is in
// ssh-workspace.ts, the checks of its args in validate.ts).
import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { GlobalSettings, ImagePullPolicy, ImageSettings } from "../shared/image";
import type { NetworkPolicyEgressRule } from "../shared/network";
import type { PodSettings } from "../shared/pod";
import type { ConnectGatewayRegistration } from "./contract";
import type { ValueOf } from "../shared/enum";

/**
 * What sshd forwards for a client: `none` (AllowTcpForwarding and AllowStreamLocalForwarding no)
 * or `local` (`ssh -L` ports and sockets on the workspace's side, what VS Code Remote-SSH needs).
 */
export const SshWorkspaceTcpForwarding = {
  /** No forwarding (the default). */
  None: "none",
  /** `ssh -L` ports and sockets on the workspace's side. */
  Local: "local",
} as const;
export type SshWorkspaceTcpForwarding = ValueOf<typeof SshWorkspaceTcpForwarding>;

/** Whether evictions (node drains) may move a workspace. */
export const SshWorkspaceDisruption = {
  /** A PDB with maxUnavailable 0: a drain waits until an operator deletes the pod (the default). */
  Never: "never",
  /** maxUnavailable 1: a drain moves it, cutting its live SSH sessions. */
  Allowed: "allowed",
} as const;
export type SshWorkspaceDisruption = ValueOf<typeof SshWorkspaceDisruption>;

/** The workspace's persistent home volume. */
export interface SshWorkspaceStorage {
  /**
   * Size of the home volume (default 10Gi).
   * @pattern ^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$
   */
  size?: string;
  /** StorageClass of the home volume (default: the cluster's default). */
  storageClassName?: string;
}

// Not the shared SecretKeyRef (components/shared/secret.ts), whose key is required: this key has a
// default (authorized_keys), and making it required would break the settings that leave it out.
/** A key in an existing Secret. */
export interface SecretKeyReference {
  /**
   * A Secret in the workspace's namespace.
   * @pattern ^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$
   */
  name: string;
  /**
   * The key holding the authorized_keys file (default `authorized_keys`).
   * @minLength 1
   */
  key?: string;
}

export interface SshWorkspaceArgs extends PodSettings {
  /**
   * The gateway the workspace registers on: its `registration` output (`new SshWorkspace(name, { gateway: connect.registration, ... })`).
   * An input, so that every SDK can pass the ConnectGateway's output itself.
   */
  gateway: pulumi.Input<ConnectGatewayRegistration>;
  /**
   * The workspace's namespace; never the gateway's, which holds nothing but the gateway and its
   * TLS Secret. Plain: the route's domain must be known at preview.
   */
  namespace: string;
  /** The login user, which must exist in the image (default `dev`). */
  user?: string;
  /** The user's numeric id in the image (default 1000); sshd runs as this user. */
  uid?: number;
  /** The image: images/ssh-workspace or one that extends it, over DEFAULT_WORKSPACE_IMAGE field by field (a digest wins over the tag). */
  image?: ImageSettings;
  /** The global image registry (a mirror) and pull secrets. */
  global?: GlobalSettings;
  /** Image pull policy (default IfNotPresent). */
  imagePullPolicy?: ImagePullPolicy;
  /** The public keys allowed to log in (a Secret is made of them). Give this or authorizedKeysSecret. */
  authorizedKeys?: string[];
  /** An existing Secret holding the authorized_keys file. Give this or authorizedKeys. */
  authorizedKeysSecret?: SecretKeyReference;
  /** The persistent home volume. */
  storage?: SshWorkspaceStorage;
  /** Envoy's per-route idle timeout for the tunnel (default 3600s; keep-alives reset it). */
  idleTimeout?: string;
  /** The `Host` alias in the ssh config output (default: the workspace's object name). */
  sshAlias?: string;
  /** ServerAliveInterval in the ssh config output (default 30). */
  serverAliveInterval?: number;
  /** Container resources (default: 100m CPU, 256Mi requested; 2Gi memory limit). */
  resources?: pulumi.Input<k8s.types.input.core.v1.ResourceRequirements>;
  /**
   * Whether evictions may move the workspace: `never` (default: a PDB with maxUnavailable 0, so a
   * node drain waits until an operator deletes the pod) or `allowed` (maxUnavailable 1: a drain
   * moves it, cutting its live SSH sessions; the home volume follows it).
   */
  disruption?: SshWorkspaceDisruption;
  /**
   * Port and socket forwarding by sshd: `none` (default) or `local` (`ssh -L`; VS Code Remote-SSH
   * needs it). Remote forwarding, agent forwarding, X11 and tunnels are always off.
   */
  tcpForwarding?: SshWorkspaceTcpForwarding;
  /**
   * Egress beyond the cluster DNS, as NetworkPolicy egress rules (default: none, so the workspace
   * reaches nothing; e.g. `[{ to: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8"] } }] }]`
   * for the internet but not the cluster's range).
   */
  egress?: NetworkPolicyEgressRule[];
  /** Labels added to every object. */
  labels?: Record<string, string>;
  /**
   * The app.kubernetes.io/instance label: the stack's base name, as the chart's release name
   * (default: this component's name). The workspace itself is app.kubernetes.io/component.
   */
  instance?: string;
}
