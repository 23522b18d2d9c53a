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
import { childObjects, type ChildObjects } from "../shared/children";
import { imageReference, type ImageSettings } from "../shared/image";
import { objectName, serviceFqdn, statefulSetName } from "../shared/names";
import { dnsEgressRule, peerIn } from "../shared/network";
import { podMetadata, podPlacement } from "../shared/pod";
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../shared/security";
import {
  claimGatewayDomain,
  isKnownGateway,
  WORKSPACE_SERVICE_PORT,
  WORKSPACE_SSHD_PORT,
  type ConnectGatewayRegistration,
} from "./contract";
import { workspaceRouteFilterAnnotations, workspaceRouteFilterSpec } from "./envoy-filters";
import type { SecretKeyReference, SshWorkspaceArgs } from "./ssh-workspace-args";
import { gatewayNamespaceProblems, sshWorkspaceProblems } from "./validate";

export * from "./ssh-workspace-args";
export { NetworkProtocol } from "../shared/network";

/** The image built from images/ssh-workspace (Ubuntu, OpenSSH, user `dev` uid 1000). @internal */
export const DEFAULT_WORKSPACE_IMAGE: ImageSettings = {
  registry: "ghcr.io",
  repository: "entryway/ssh-workspace",
  tag: "0.1.0",
};
/** Where the image's entrypoint reads authorized keys (file `authorized_keys`). @internal */
export const AUTHORIZED_KEYS_DIR = "/etc/entryway/keys";

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
/** The names and labels every step shares (the chart's templates/ssh/_helpers.tpl). */
interface Plan extends ChildObjects {
  readonly name: string;
  readonly args: SshWorkspaceArgs;
  /** A plain registration (a TypeScript program, the Stack) or an Output; see fromGateway. */
  readonly gateway: pulumi.Input<ConnectGatewayRegistration>;
  readonly ns: string;
  readonly user: string;
  readonly uid: number;
  readonly ws: string;
}

function plan(
  name: string,
  args: SshWorkspaceArgs,
  parent: pulumi.Resource,
  opts: pulumi.ComponentResourceOptions | undefined,
): Plan {
  const ns = args.namespace;
  const ws = statefulSetName(name);
  return {
    ...childObjects(
      { name: "ssh-workspace", instance: args.instance ?? ws, component: ws },
      args.labels,
      ns,
      parent,
      opts,
    ),
    name,
    args,
    gateway: args.gateway,
    ns,
    user: args.user ?? "dev",
    uid: args.uid ?? 1000,
    ws,
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

  /**
   * The workspace's route on the gateway: its EnvoyFilter in the gateway's namespace. The spec and its
   * Istio and Envoy sources: workspaceRouteFilterSpec (envoy-filters.ts).
   */
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
