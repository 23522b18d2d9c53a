/**
 * SshWorkspace: an OpenSSH development container reached through a ConnectGateway. A StatefulSet
 * with a persistent home, a PDB that keeps it from being moved, a Service port 22 named `tcp-ssh`,
 * a NetworkPolicy that admits SSH only from the gateway's pods and lets out only DNS and the
 * `egress` allow-list, authorized keys from a Secret, and
 * one VIRTUAL_HOST ADD EnvoyFilter that routes `CONNECT <fqdn>:22` on the gateway (a virtual host
 * for the domain `<fqdn>` whose one route pins the port with an exact `:authority` match). sshd
 * runs as the workspace user (non-root) with password login off (images/ssh-workspace).
 *
 * Output: the user's ~/.ssh/config block, written by sshConfigBlock() (packages/ssh-config,
 * the one place that writes it; `entryway ssh-config` uses it too).
 */
import { sshConfigBlock } from "@entryway/ssh-config";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { selectorLabels, standardLabels } from "../shared/labels";
import { imageReference, type GlobalSettings, type ImageSettings } from "../shared/image";
import { objectName, serviceFqdn, statefulSetName } from "../shared/names";
import { dnsEgressRule, peerIn, type NetworkPolicyEgressRule } from "../shared/network";
import { podMetadata, podPlacement, type PodSettings } from "../shared/pod";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../shared/security";
import type { ImagePullPolicy } from "../shared/image";
import { claimGatewayDomain, WORKSPACE_SSHD_PORT, type ConnectGatewayRegistration } from "./contract";
import type { ValueOf } from "../shared/enum";

/** The image built from images/ssh-workspace (Ubuntu, OpenSSH, user `dev` uid 1000). @internal */
export const DEFAULT_WORKSPACE_IMAGE: ImageSettings = {
  registry: "ghcr.io",
  repository: "entryway/ssh-workspace",
  tag: "0.1.0",
};
/** The Service port the gateway dials (named tcp-ssh). @internal */
export const WORKSPACE_SERVICE_PORT = 22;
/** Where the image's entrypoint reads authorized keys (file `authorized_keys`). @internal */
export const AUTHORIZED_KEYS_DIR = "/etc/entryway/keys";

const LOGIN = /^[a-z_][a-z0-9_-]{0,31}$/;
const DURATION = /^\d+(\.\d{1,9})?s$/;
/** The AuthorizedKey pattern (config.ts): no control character or line separator in the comment. */
const PUBLIC_KEY =
  /^[ \t]*(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]+=*( [^\p{Cc}\p{Zl}\p{Zp}]*)?[ \t]*\n?$/u;

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

export { NetworkProtocol } from "../shared/network";

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

/** Every mistake in the arguments known at preview, one line each naming the workspace. */
function sshWorkspaceProblems(name: string, args: SshWorkspaceArgs): string[] {
  const problems: string[] = [];
  if (!LOGIN.test(args.user ?? "dev")) problems.push(`user ${JSON.stringify(args.user)} is not a valid login name`);
  const uid = args.uid ?? 1000;
  if (!Number.isInteger(uid) || uid < 1 || uid > 2147483647)
    problems.push(`uid must be a non-root user id (>= 1), not ${uid}`);
  const hasKeys = args.authorizedKeys !== undefined;
  if (hasKeys === (args.authorizedKeysSecret !== undefined)) {
    problems.push(`give exactly one of authorizedKeys and authorizedKeysSecret`);
  }
  if (hasKeys) {
    if (args.authorizedKeys!.length === 0) problems.push(`authorizedKeys is empty: nobody could log in`);
    for (const key of args.authorizedKeys!) {
      if (!PUBLIC_KEY.test(key)) {
        problems.push(
          `authorizedKeys entry ${JSON.stringify(key.slice(0, 40))}... is not an OpenSSH public key on one line (never put a private key here; no control character or line separator in its comment)`,
        );
      }
    }
  }
  if (args.disruption !== undefined && args.disruption !== "never" && args.disruption !== "allowed") {
    problems.push(`disruption must be "never" or "allowed", not ${JSON.stringify(args.disruption)}`);
  }
  // A gateway known only at deployment (an Output) is checked by the constructor once known.
  if (isKnownGateway(args.gateway)) problems.push(...gatewayNamespaceProblems(args.namespace, args.gateway));
  if (args.tcpForwarding !== undefined && args.tcpForwarding !== "none" && args.tcpForwarding !== "local") {
    problems.push(`tcpForwarding must be "none" or "local", not ${JSON.stringify(args.tcpForwarding)}`);
  }
  if (args.idleTimeout !== undefined && !DURATION.test(args.idleTimeout)) {
    problems.push(`idleTimeout must be seconds like "3600s", not ${JSON.stringify(args.idleTimeout)}`);
  }
  return problems.map((problem) => `SshWorkspace ${name}: ${problem}`);
}

/**
 * Checks the arguments without making the component (which reports the same problems as a
 * ResourceError of its own); throws every problem at once, one a line.
 * @internal
 */
export function validateSshWorkspaceArgs(name: string, args: SshWorkspaceArgs): void {
  const problems = sshWorkspaceProblems(name, args);
  if (problems.length > 0) throw new Error(problems.join("\n"));
}

function gatewayNamespaceProblems(namespace: string, gateway: ConnectGatewayRegistration): string[] {
  return namespace === gateway.namespace
    ? [
        `namespace ${namespace} is the connect gateway's; a workspace (and its keys Secret) runs in another namespace, since the internet-facing gateway may read every Secret in its own`,
      ]
    : [];
}

/**
 * `use(gateway)` now when the registration is a plain value (a TypeScript program, the Stack), or
 * once it is known when it is an Output. Through the component provider it is one whenever the
 * program took it from another resource (`gateway: ${connect.registration}` in YAML,
 * `gateway=connect.registration` in Python): the engine sends that input's dependencies
 * (pulumi/pulumi sdk/go/common/resource/plugin/provider_plugin.go `Construct`,
 * inputDependencies) and @pulumi/pulumi's provider host wraps every input with dependencies in an
 * Output (provider/server.js `deserializeInputs`). Found by the real engine
 * (test/real/languages.test.ts); test/provider/host.test.ts sends the same dependencies.
 */
function fromGateway<T>(
  gateway: pulumi.Input<ConnectGatewayRegistration>,
  use: (gateway: ConnectGatewayRegistration) => T,
): T | pulumi.Output<T> {
  return isKnownGateway(gateway) ? use(gateway) : pulumi.output(gateway).apply((known) => use(known));
}

/** Whether the registration is a plain value now (not an Output or a Promise). */
function isKnownGateway(gateway: pulumi.Input<ConnectGatewayRegistration>): gateway is ConnectGatewayRegistration {
  return !pulumi.Output.isInstance(gateway) && !(gateway instanceof Promise);
}

/** The names and labels every step shares (the chart's templates/ssh/_helpers.tpl). */
interface Plan {
  readonly name: string;
  readonly args: SshWorkspaceArgs;
  /** A plain registration (a TypeScript program, the Stack) or an Output; see fromGateway. */
  readonly gateway: pulumi.Input<ConnectGatewayRegistration>;
  readonly ns: string;
  readonly user: string;
  readonly uid: number;
  readonly ws: string;
  readonly selector: Record<string, string>;
  readonly labels: Record<string, string>;
  readonly meta: (
    objName: string,
    namespace?: pulumi.Input<string>,
  ) => { name: string; namespace: pulumi.Input<string>; labels: Record<string, string> };
  /** The options of every child: `parent` and the component's own dependsOn. */
  readonly child: pulumi.CustomResourceOptions;
}

function plan(
  name: string,
  args: SshWorkspaceArgs,
  parent: pulumi.Resource,
  opts: pulumi.ComponentResourceOptions | undefined,
): Plan {
  const ns = args.namespace;
  const ws = statefulSetName(name);
  const identity = { name: "ssh-workspace", instance: args.instance ?? ws, component: ws };
  const labels = standardLabels(identity, args.labels);
  return {
    name,
    args,
    gateway: args.gateway,
    ns,
    user: args.user ?? "dev",
    uid: args.uid ?? 1000,
    ws,
    selector: selectorLabels(identity),
    labels,
    meta: (objName, namespace = ns) => ({ name: objName, namespace, labels }),
    // Children wait for what the component waits for (e.g. the Stack's namespace).
    child: { parent, ...(opts?.dependsOn ? { dependsOn: opts.dependsOn } : {}) },
  };
}

// SshWorkspace, made in the order of the chart's templates/ssh/workspaces.yaml: the
// authorized_keys Secret, Service, StatefulSet, PodDisruptionBudget, NetworkPolicy and the
// route's EnvoyFilter. Every problem known at preview is reported at once, before any object.
/**
 * An SSH workspace: an OpenSSH dev container (non-root sshd) with a persistent home volume, reached
 * through a ConnectGateway, admitting SSH only from the gateway and letting out only DNS and the
 * egress it is given. Outputs the ~/.ssh/config block that reaches it (`sshConfig`).
 */
export class SshWorkspace extends pulumi.ComponentResource {
  /** The Service's name (also the StatefulSet's). */
  public readonly serviceName: string;
  /** The workspace's namespace. */
  public readonly namespace: string;
  /** The Service's in-cluster DNS name (the ssh HostName). */
  public readonly fqdn: string;
  /** The virtual host's domain on the gateway: `<fqdn>` (Istio's gateways ignore the port in host matching). */
  public readonly domain: string;
  /** The CONNECT authority the workspace's route accepts: `<fqdn>:22`. */
  public readonly authority: string;
  /** The workspace's EnvoyFilter (in the gateway's namespace). */
  public readonly routeFilterName: string;
  /** The ~/.ssh/config block (alias: sshAlias, default the workspace's object name). */
  public readonly sshConfig: pulumi.Output<string>;

  constructor(name: string, args: SshWorkspaceArgs, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:SshWorkspace", name, {}, opts);
    const problems = sshWorkspaceProblems(name, args);
    if (problems.length > 0) throw new pulumi.ResourceError(problems.join("\n"), this);
    const p = plan(name, args, this, opts);

    this.serviceName = p.ws;
    this.namespace = p.ns;
    this.fqdn = serviceFqdn(p.ws, p.ns);
    this.domain = this.fqdn;
    this.authority = `${this.fqdn}:${WORKSPACE_SERVICE_PORT}`;
    this.routeFilterName = objectName(name, "route");
    this.sshConfig = this.registration(p);

    const keysSecret = this.authorizedKeys(p);
    this.service(p);
    this.statefulSet(p, keysSecret);
    this.disruptionBudget(p);
    this.networkPolicy(p);
    this.route(p);

    this.registerOutputs({
      serviceName: this.serviceName,
      namespace: this.namespace,
      fqdn: this.fqdn,
      domain: this.domain,
      authority: this.authority,
      sshConfig: this.sshConfig,
    });
  }

  /**
   * The workspace's claim of its domain on the gateway, and the ~/.ssh/config block that reaches
   * it there; a gateway known only at deployment is checked here once known.
   */
  private registration(p: Plan): pulumi.Output<string> {
    const { name, args, gateway, ns, ws } = p;
    const where = `SshWorkspace ${name}`;
    return pulumi.output(
      fromGateway(gateway, (known) => {
        const problems = !isKnownGateway(gateway) ? gatewayNamespaceProblems(ns, known) : [];
        if (problems.length > 0)
          throw new pulumi.ResourceError(problems.map((problem) => `${where}: ${problem}`).join("\n"), this);
        // Keyed by the registration object: through the provider each Construct has its own copy, so
        // there the claim sees this workspace only (as it did before the gateway became an Output).
        claimGatewayDomain(known, this.domain, ws);
        try {
          return sshConfigBlock({
            alias: args.sshAlias ?? ws,
            hostName: this.fqdn,
            port: WORKSPACE_SERVICE_PORT,
            user: p.user,
            gateway: known.address,
            tls: known.tls,
            serverAliveInterval: args.serverAliveInterval,
          });
        } catch (error) {
          throw new pulumi.ResourceError(`${where}: ${(error as Error).message}`, this);
        }
      }),
    );
  }

  /** The authorized_keys Secret when keys are given; else the existing Secret named. */
  private authorizedKeys(p: Plan): SecretKeyReference {
    const { name, args } = p;
    if (!args.authorizedKeys) return args.authorizedKeysSecret!;
    const secretName = objectName(name, "authorized-keys");
    new k8s.core.v1.Secret(
      secretName,
      {
        metadata: p.meta(secretName),
        type: "Opaque",
        stringData: { authorized_keys: args.authorizedKeys.map((k) => k.trim()).join("\n") + "\n" },
      },
      p.child,
    );
    return { name: secretName, key: "authorized_keys" };
  }

  /**
   * The Service the gateway dials (port 22, tcp-ssh), visible in the mesh only to the gateway,
   * which lives in another namespace: a mesh with defaultServiceExportTo ["."] would hide it from
   * the gateway (503, no cluster). Istio reads a comma-separated list of namespaces here
   * (pilot/pkg/serviceregistry/kube/conversion.go).
   */
  private service(p: Plan): void {
    const { gateway, ws } = p;
    new k8s.core.v1.Service(
      ws,
      {
        metadata: {
          ...p.meta(ws),
          annotations: fromGateway(gateway, (known) => ({ "networking.istio.io/exportTo": known.namespace })),
        },
        spec: {
          type: "ClusterIP",
          selector: p.selector,
          ports: [{ name: "tcp-ssh", port: WORKSPACE_SERVICE_PORT, targetPort: WORKSPACE_SSHD_PORT, protocol: "TCP" }],
        },
      },
      p.child,
    );
  }

  /** sshd as the workspace user, with its home on a volume of its own. */
  private statefulSet(p: Plan, keysSecret: SecretKeyReference): void {
    const { args, ws, user, uid, labels } = p;
    const home = `/home/${user}`;
    new k8s.apps.v1.StatefulSet(
      ws,
      {
        metadata: p.meta(ws),
        spec: {
          replicas: 1,
          serviceName: ws,
          selector: { matchLabels: p.selector },
          persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
          template: {
            metadata: podMetadata(labels, args),
            spec: {
              automountServiceAccountToken: false,
              enableServiceLinks: false,
              ...podPlacement(args, args.global),
              securityContext: restrictedPodSecurityContext({ user: uid }),
              containers: [
                {
                  name: "sshd",
                  image: imageReference(DEFAULT_WORKSPACE_IMAGE, args.image, args.global),
                  imagePullPolicy: args.imagePullPolicy ?? "IfNotPresent",
                  env: [
                    { name: "ENTRYWAY_SSH_USER", value: user },
                    { name: "ENTRYWAY_SSHD_PORT", value: String(WORKSPACE_SSHD_PORT) },
                    { name: "ENTRYWAY_TCP_FORWARDING", value: args.tcpForwarding === "local" ? "local" : "no" },
                  ],
                  ports: [{ name: "ssh", containerPort: WORKSPACE_SSHD_PORT, protocol: "TCP" }],
                  readinessProbe: { tcpSocket: { port: WORKSPACE_SSHD_PORT }, periodSeconds: 10 },
                  livenessProbe: {
                    tcpSocket: { port: WORKSPACE_SSHD_PORT },
                    initialDelaySeconds: 10,
                    periodSeconds: 30,
                  },
                  resources: args.resources ?? {
                    requests: { cpu: "100m", memory: "256Mi" },
                    limits: { memory: "2Gi" },
                  },
                  securityContext: restrictedContainerSecurityContext({ runAs: { user: uid } }),
                  volumeMounts: [
                    { name: "home", mountPath: home },
                    { name: "authorized-keys", mountPath: AUTHORIZED_KEYS_DIR, readOnly: true },
                    { name: "run", mountPath: "/run/entryway" },
                    { name: "tmp", mountPath: "/tmp" },
                  ],
                },
              ],
              volumes: [
                {
                  name: "authorized-keys",
                  secret: {
                    secretName: keysSecret.name,
                    defaultMode: 0o444,
                    items: [{ key: keysSecret.key ?? "authorized_keys", path: "authorized_keys" }],
                  },
                },
                { name: "run", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } },
                { name: "tmp", emptyDir: {} },
              ],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: "home", labels },
              spec: {
                accessModes: ["ReadWriteOnce"],
                ...(args.storage?.storageClassName ? { storageClassName: args.storage.storageClassName } : {}),
                resources: { requests: { storage: args.storage?.size ?? "10Gi" } },
              },
            },
          ],
        },
      },
      p.child,
    );
  }

  /** `never`: evictions (drains) wait until someone deletes the pod; `allowed`: a drain moves it. */
  private disruptionBudget(p: Plan): void {
    const { args, ws } = p;
    new k8s.policy.v1.PodDisruptionBudget(
      ws,
      {
        metadata: p.meta(ws),
        spec: { maxUnavailable: args.disruption === "allowed" ? 1 : 0, selector: { matchLabels: p.selector } },
      },
      p.child,
    );
  }

  /**
   * In: sshd's port from the gateway's pods only. Out: DNS and the egress allow-list; the pod is
   * isolated by this policy itself, in whatever namespace it runs.
   */
  private networkPolicy(p: Plan): void {
    const { args, gateway, ws } = p;
    new k8s.networking.v1.NetworkPolicy(
      ws,
      {
        metadata: p.meta(ws),
        spec: {
          podSelector: { matchLabels: p.selector },
          policyTypes: ["Ingress", "Egress"],
          ingress: fromGateway(gateway, (known) => [
            {
              from: [peerIn({ namespace: known.namespace, podSelector: known.selector })],
              ports: [{ port: WORKSPACE_SSHD_PORT, protocol: "TCP" }],
            },
          ]),
          egress: fromGateway(gateway, (known) => [dnsEgressRule(known.dns), ...(args.egress ?? [])]),
        },
      },
      p.child,
    );
  }

  /** The workspace's route on the gateway: its EnvoyFilter in the gateway's namespace (workspaceRouteFilterSpec). */
  private route(p: Plan): void {
    const { args, gateway, ns, ws } = p;
    new k8s.apiextensions.CustomResource(
      this.routeFilterName,
      {
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "EnvoyFilter",
        metadata: {
          ...p.meta(
            this.routeFilterName,
            fromGateway(gateway, (known) => known.namespace),
          ),
          annotations: workspaceRouteFilterAnnotations(ns, this.fqdn),
        },
        spec: fromGateway(gateway, (known) =>
          workspaceRouteFilterSpec({
            selector: known.selector,
            port: known.port,
            routeConfigurationName: known.routeConfigurationName,
            virtualHostName: `${ws}.${ns}`,
            fqdn: this.fqdn,
            idleTimeout: args.idleTimeout ?? "3600s",
          }),
        ),
      },
      p.child,
    );
  }
}

/**
 * With PILOT_FILTER_GATEWAY_CLUSTER_CONFIG=true istiod sends a gateway only the clusters of services
 * something references; a route added by EnvoyFilter does not count, and its CONNECT would fail
 * with 503 (NC: no cluster). Istio >= 1.26 counts the services an EnvoyFilter names in this
 * annotation (istio pilot/pkg/model/envoyfilter.go convertToEnvoyFilterWrapper, read by
 * push_context.go extraServicesForProxy; istio PR 55038). Older Istio ignores it.
 * @internal
 */
export function workspaceRouteFilterAnnotations(namespace: string, fqdn: string): Record<string, string> {
  return { "envoyfilter.istio.io/referenced-services": `${namespace}/${fqdn}` };
}

/**
 * The workspace's one patch: a virtual host for the domain `<fqdn>` whose one route takes only
 * `CONNECT <fqdn>:22`, to a static cluster.
 *
 * The domain carries no port because Istio builds every gateway route configuration with
 * `ignore_port_in_host_matching: true` (istio pilot/pkg/networking/core/gateway.go,
 * buildGatewayHTTPRouteConfig), and Envoy then cuts the port from the request's authority, never
 * from `domains`, before the virtual-host lookup (envoy source/common/router/config_impl.cc,
 * RouteMatcher::findVirtualHost): a domain `<fqdn>:22` would never match. The port is pinned by
 * the route's exact `:authority` header match instead, which sees the authority as sent (for
 * CONNECT over HTTP/1 the request-target `host:port`: envoy source/common/http/http1/codec_impl.cc,
 * ServerConnectionImpl::handlePath), so CONNECT to the host on any other port gets 404.
 * @internal
 */
export function workspaceRouteFilterSpec(route: {
  selector: Record<string, string>;
  port: number;
  routeConfigurationName: string;
  virtualHostName: string;
  fqdn: string;
  idleTimeout: string;
}): Record<string, unknown> {
  return {
    workloadSelector: { labels: route.selector },
    configPatches: [
      {
        applyTo: "VIRTUAL_HOST",
        match: {
          context: "GATEWAY",
          routeConfiguration: { portNumber: route.port, name: route.routeConfigurationName },
        },
        patch: {
          operation: "ADD",
          value: {
            name: route.virtualHostName,
            domains: [route.fqdn],
            routes: [
              {
                match: {
                  connect_matcher: {},
                  headers: [{ name: ":authority", string_match: { exact: `${route.fqdn}:${WORKSPACE_SERVICE_PORT}` } }],
                },
                route: {
                  cluster: `outbound|${WORKSPACE_SERVICE_PORT}||${route.fqdn}`,
                  // Routes added by EnvoyFilter default to a 15 s timeout: an SSH session has none.
                  timeout: "0s",
                  idle_timeout: route.idleTimeout,
                  upgrade_configs: [{ upgrade_type: "CONNECT", connect_config: {} }],
                },
              },
            ],
          },
        },
      },
    ],
  };
}
