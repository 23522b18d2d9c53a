/**
 * The contract between the connect gateway and its workspaces: the port sshd serves in a workspace
 * pod, what a workspace needs to register its route (the gateway's `registration`), and the
 * domains claimed on a gateway. A module of its own, so that connect-gateway.ts and
 * ssh-workspace.ts each import it and never each other (eslint's import-x/no-cycle keeps it so).
 */
import * as pulumi from "@pulumi/pulumi";
import type { InClusterPeer } from "../shared/network";

/** The port sshd listens on inside the pod: non-root processes cannot bind 22. @internal */
export const WORKSPACE_SSHD_PORT = 2222;
/** The Service port the gateway dials (named tcp-ssh). @internal */
export const WORKSPACE_SERVICE_PORT = 22;

/**
 * What a workspace needs to register its route on a gateway: the ConnectGateway's `registration`
 * output. Workspaces take this, not the gateway object, since Pulumi's component analyzer accepts
 * resource references only to @pulumi/* packages (pulumi/pulumi
 * sdk/nodejs/provider/experimental/analyzer.ts, getResourceType): a workspace in another language
 * or another stack passes the gateway's outputs.
 */
export interface ConnectGatewayRegistration {
  /** The gateway's object name (Deployment, Service, Gateway, ...). */
  readonly gatewayName: string;
  /** The gateway's namespace, where the workspaces' route patches go. */
  readonly namespace: string;
  /** The CONNECT port. */
  readonly port: number;
  /** The gateway pods' labels (EnvoyFilter workloadSelector, NetworkPolicy peers). */
  readonly selector: Record<string, string>;
  /** The Envoy route configuration the port's virtual hosts live in. */
  readonly routeConfigurationName: string;
  /** `host:port` as users reach it. */
  readonly address: string;
  /** Whether the CONNECT hop has TLS. */
  readonly tls: boolean;
  /** The cluster DNS (workspaces' NetworkPolicies allow it). */
  readonly dns: InClusterPeer;
}

/**
 * The virtual-host domains claimed on each gateway, and by which workspace: keyed by the
 * registration object, so workspaces given one gateway's `registration` in one program share it.
 */
const claimedDomains = new WeakMap<ConnectGatewayRegistration, Map<string, string>>();

/**
 * Claims a virtual-host domain (the workspace's `<fqdn>`, no port) on a gateway for a workspace.
 * Two virtual hosts with one domain make Envoy reject the whole route configuration ("Only unique
 * values for domains are permitted": envoy source/common/router/config_impl.cc, RouteMatcher), so
 * every route on the port would stop; the second claim is an error at preview.
 * @internal
 */
export function claimGatewayDomain(gateway: ConnectGatewayRegistration, domain: string, workspace: string): void {
  const claims = claimedDomains.get(gateway) ?? new Map<string, string>();
  claimedDomains.set(gateway, claims);
  const owner = claims.get(domain);
  if (owner !== undefined) {
    throw new Error(
      `SshWorkspace ${workspace}: domain ${domain} is already routed by workspace ${owner} on ConnectGateway ${gateway.gatewayName}; Envoy would reject every route on port ${gateway.port}`,
    );
  }
  claims.set(domain, workspace);
}

/** Whether the registration is a plain value now (not an Output or a Promise). @internal */
export function isKnownGateway(
  gateway: pulumi.Input<ConnectGatewayRegistration>,
): gateway is ConnectGatewayRegistration {
  return !pulumi.Output.isInstance(gateway) && !(gateway instanceof Promise);
}
