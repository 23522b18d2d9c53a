// The checks of ConnectGateway's and SshWorkspace's args, made at preview: each component reports its
// problems at once (a ResourceError), and validate*Args lets a caller check without making one.
import type { ConnectGatewayArgs } from "./connect-gateway-args";
import { isKnownGateway, type ConnectGatewayRegistration } from "./contract";
import type { SshWorkspaceArgs } from "./ssh-workspace-args";

/** Ports the gateway never takes for SSH: the usual web ports and Istio's own. @internal */
export const RESERVED_CONNECT_PORTS: readonly number[] = [
  80, 443, 15000, 15001, 15004, 15006, 15008, 15009, 15020, 15021, 15053, 15090,
];
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const CIDR = /^(\d{1,3}(\.\d{1,3}){3}\/(3[0-2]|[12]?\d)|[0-9a-fA-F:]+:[0-9a-fA-F:]*\/(12[0-8]|1[01]\d|[1-9]?\d))$/;
const LOGIN = /^[a-z_][a-z0-9_-]{0,31}$/;
const DURATION = /^\d+(\.\d{1,9})?s$/;
/** The AuthorizedKey pattern (config.ts): no control character or line separator in the comment. */
const PUBLIC_KEY =
  /^[ \t]*(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]+=*( [^\p{Cc}\p{Zl}\p{Zp}]*)?[ \t]*\n?$/u;

/** Every mistake in ConnectGateway's arguments, one line each naming the gateway. @internal */
export function connectGatewayProblems(name: string, args: ConnectGatewayArgs): string[] {
  const problems: string[] = [];
  const port = args.port ?? 2222;
  if (!NAMESPACE.test(args.namespace ?? "")) {
    problems.push(
      `namespace ${JSON.stringify(args.namespace)} is not a namespace name (a DNS label of at most 63 characters)`,
    );
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    problems.push(`port must be 1-65535, not ${port}`);
  }
  if (RESERVED_CONNECT_PORTS.includes(port)) {
    problems.push(
      `port ${port} is reserved (80/443 carry web traffic; 150xx are Istio's); pick a dedicated port such as 2222`,
    );
  }
  if (args.hostname !== undefined && !DNS_NAME.test(args.hostname)) {
    problems.push(`hostname ${JSON.stringify(args.hostname)} is not a lower-case DNS name`);
  }
  const type = args.serviceType ?? "LoadBalancer";
  if (!["LoadBalancer", "NodePort", "ClusterIP"].includes(type)) {
    problems.push(`serviceType must be LoadBalancer, NodePort or ClusterIP, not ${type}`);
  }
  if (
    args.nodePort !== undefined &&
    (type === "ClusterIP" || !Number.isInteger(args.nodePort) || args.nodePort < 30000 || args.nodePort > 32767)
  ) {
    problems.push(`nodePort must be 30000-32767 and needs serviceType NodePort or LoadBalancer`);
  }
  for (const cidr of args.allowedSourceRanges ?? []) {
    if (!CIDR.test(cidr)) problems.push(`allowedSourceRanges entry ${JSON.stringify(cidr)} is not a CIDR`);
  }
  if (args.tls && !/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(args.tls.credentialName ?? "")) {
    problems.push(`tls.credentialName must name a Secret in namespace ${args.namespace}`);
  }
  // With TLS the hostname is the Gateway server's host, and Istio's validation refuses a host
  // without a dot (pkg/config/validation/agent/validation.go, validateSidecarOrGatewayHostnamePart:
  // "short names (non FQDN) are not allowed"), so the webhook would reject the Gateway.
  if (args.tls && args.hostname !== undefined && !args.hostname.includes(".")) {
    problems.push(
      `with tls, hostname ${JSON.stringify(args.hostname)} must be a fully qualified name (Istio refuses a Gateway host without a dot)`,
    );
  }
  if (args.replicas !== undefined && (!Number.isInteger(args.replicas) || args.replicas < 1)) {
    problems.push(`replicas must be at least 1`);
  }
  const a = args.autoscaling;
  if (a) {
    const min = a.minReplicas ?? 2;
    const max = a.maxReplicas ?? 5;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min) {
      problems.push(`autoscaling needs 1 <= minReplicas <= maxReplicas`);
    }
  }
  return problems.map((problem) => `ConnectGateway ${name}: ${problem}`);
}

/**
 * Checks the arguments without making the component (which reports the same problems as a
 * ResourceError of its own); throws every problem at once, one a line.
 * @internal
 */
export function validateConnectGatewayArgs(name: string, args: ConnectGatewayArgs): void {
  const problems = connectGatewayProblems(name, args);
  if (problems.length > 0) throw new Error(problems.join("\n"));
}

/** Every mistake in SshWorkspace's arguments known at preview, one line each naming the workspace. @internal */
export function sshWorkspaceProblems(name: string, args: SshWorkspaceArgs): string[] {
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

/** A workspace in the gateway's own namespace, refused. @internal */
export function gatewayNamespaceProblems(namespace: string, gateway: ConnectGatewayRegistration): string[] {
  return namespace === gateway.namespace
    ? [
        `namespace ${namespace} is the connect gateway's; a workspace (and its keys Secret) runs in another namespace, since the internet-facing gateway may read every Secret in its own`,
      ]
    : [];
}
