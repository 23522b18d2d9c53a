/**
 * The whole stack's configuration: one object under the Pulumi config key `entryway:stack`.
 * config.schema.json is generated from StackConfig (`npm run generate:schema`) and a test keeps
 * the two in step; loadStackConfig validates a stack's config against it before anything is made.
 */
import Ajv from "ajv";
import schema from "./config.schema.json";
import type { ConnectGatewayConfig, NetworkPeersConfig, SshWorkspaceConfig } from "../ssh/config";
import type { ExecGatewayConfig } from "../exec-gateway/config";
import type { AnsibleFormsConfig, RemoteRteConfig } from "../ansibleforms/config";
import type { GlobalSettings } from "../shared/image";
import { schemaProblems } from "../shared/schema";
import type { WorkspaceDefaultsConfig } from "../ssh/config";

/** The configuration of one environment (one Pulumi stack). */
export interface StackConfig {
  /**
   * The base of every object name, as the Helm release name is for the chart (default "entryway").
   * @pattern ^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$
   */
  name?: string;
  /**
   * The namespace the stack's workloads run in.
   * @pattern ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$
   */
  namespace: string;
  /** Create the namespace (default true); false when the platform creates namespaces. */
  createNamespace?: boolean;
  /** Labels added to every object the stack makes. */
  labels?: Record<string, string>;
  /** What applies to every workload: a registry mirror for every image, and pull secrets for every pod. */
  global?: GlobalSettings;
  /**
   * Peers of the NetworkPolicies. Every namespace the stack owns (its own, and the connect
   * gateway's) gets a default deny of all ingress and egress plus DNS for every pod; each workload's
   * own policy allows the rest.
   */
  networkPolicy?: NetworkPeersConfig;
  /** The dedicated Istio CONNECT gateway for SSH workspaces (components/ssh); deployed when present. */
  connectGateway?: ConnectGatewayConfig;
  /** SSH workspaces registered on the connect gateway (which they need). */
  workspaces?: SshWorkspaceConfig[];
  /** What every workspace gets unless its item says otherwise. */
  workspaceDefaults?: WorkspaceDefaultsConfig;
  /** The exec gateway (components/exec-gateway); deployed when present. */
  execGateway?: ExecGatewayConfig;
  /** AnsibleForms with its RTE (components/ansibleforms); deployed when present. */
  ansibleForms?: AnsibleFormsConfig;
  /** An outbound RTE dialing an AnsibleForms app, here or in another cluster (components/ansibleforms); deployed when present. */
  remoteRte?: RemoteRteConfig;
}

/** A stack configuration that does not fit the schema; the message is one line. */
export class StackConfigError extends Error {
  override readonly name = "StackConfigError";
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile<StackConfig>(schema);

/** Validates raw stack config (as read from `entryway:stack`) and returns it typed. */
export function parseStackConfig(raw: unknown, source = "entryway:stack"): StackConfig {
  if (raw === undefined || raw === null) {
    throw new StackConfigError(`${source} is missing: set it in Pulumi.<stack>.yaml`);
  }
  if (!validate(raw)) {
    throw new StackConfigError(`${source} is invalid: ${schemaProblems(validate.errors).join("; ")}`);
  }
  return raw;
}
