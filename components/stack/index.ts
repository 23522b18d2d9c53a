/**
 * Stack: the whole Entryway stack from one typed configuration (see config.ts). Each part is
 * its own component; this one composes them and owns the namespaces: its own and the connect
 * gateway's, each with a default-deny NetworkPolicy and DNS for every pod.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { standardLabels } from "../shared/labels";
import { ExecGateway, validateExecGatewayArgs } from "../exec-gateway";
import { execGatewayArgs } from "../exec-gateway/config";
import { AnsibleForms, RemoteRte } from "../ansibleforms";
import { ansibleFormsArgs, remoteRteArgs } from "../ansibleforms/config";
import { objectName } from "../shared/names";
import { DEFAULT_DNS, namespaceNetworkPolicies, type InClusterPeer } from "../shared/network";
import { connectGatewayArgs, connectNamespace, sshWorkspaceArgs } from "../ssh/config";
import { ConnectGateway } from "../ssh/connect-gateway";
import { SshWorkspace } from "../ssh/ssh-workspace";
import type { StackConfig } from "./config";

export { parseStackConfig, StackConfigError, type StackConfig } from "./config";

/** The default base of object names: the chart's usual release name, so both front ends agree. */
export const DEFAULT_STACK_NAME = "entryway";

export class Stack extends pulumi.ComponentResource {
  /** The namespace the stack's workloads run in. */
  public readonly namespace: pulumi.Output<string>;
  /** The connect gateway's own namespace, when the config has a `connectGateway` section. */
  public readonly connectNamespace?: string;
  /** The SSH CONNECT gateway, when the config has a `connectGateway` section. */
  public readonly connectGateway?: ConnectGateway;
  /** The SSH workspaces, one per `workspaces` item. */
  public readonly workspaces: SshWorkspace[] = [];
  /** Every workspace's ~/.ssh/config block, when there are workspaces. */
  public readonly sshConfig?: pulumi.Output<string>;
  /** The exec gateway, when the config has an `execGateway` section. */
  public readonly execGateway?: ExecGateway;
  /** The exec gateway's WebSocket URL (public when exposed), when deployed. */
  public readonly execGatewayUrl?: pulumi.Output<string>;
  /** AnsibleForms, when the config has an `ansibleForms` section. */
  public readonly ansibleForms?: AnsibleForms;
  /** The outbound RTE, when the config has a `remoteRte` section. */
  public readonly remoteRte?: RemoteRte;
  /** The AnsibleForms URL (public when exposed), when the config has an `ansibleForms` section. */
  public readonly ansibleFormsUrl?: pulumi.Output<string>;
  /** The generated AnsibleForms admin password (a secret), unless an existing keys Secret holds it. */
  public readonly ansibleFormsAdminPassword?: pulumi.Output<string>;
  /**
   * The RTE token the app shares with its RTEs (a secret), unless an existing Secret holds it:
   * a second stack's RemoteRte reads it through a StackReference.
   */
  public readonly ansibleFormsRteToken?: pulumi.Output<string>;
  /** The CA bundle that signed the app's exposed certificate (ansibleForms.expose.caBundle), for a second stack's RemoteRte. */
  public readonly ansibleFormsCaBundle?: pulumi.Output<string>;

  constructor(name: string, config: StackConfig, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:Stack", name, {}, opts);
    const base = config.name ?? DEFAULT_STACK_NAME;
    const labels = standardLabels({ name: "entryway", instance: base }, config.labels);

    const dns = config.networkPolicy?.dns ?? DEFAULT_DNS;
    this.namespace = this.ownNamespace(name, config.namespace, config.createNamespace ?? true, base, labels, dns);

    if (config.execGateway) {
      // The namespace is plain here: a target list naming it fails now, not at deployment.
      validateExecGatewayArgs(base, execGatewayArgs(config.execGateway, config.namespace));
      this.execGateway = new ExecGateway(base, execGatewayArgs(config.execGateway, this.namespace, config.labels, config.global), { parent: this });
      this.execGatewayUrl = this.execGateway.url;
    }

    if (config.workspaces?.length && !config.connectGateway) {
      throw new Error("entryway:stack: workspaces need a connectGateway section (they register on its CONNECT port)");
    }
    if (config.connectGateway) {
      const connect = connectNamespace(config.connectGateway, config.namespace);
      this.connectNamespace = connect;
      const connectReady = this.ownNamespace(`${name}-connect`, connect, config.connectGateway.createNamespace ?? true, base, labels, dns);
      // After both namespaces, when the stack makes them.
      const ssh = { parent: this, dependsOn: pulumi.all([this.namespace, connectReady]).apply((): pulumi.Resource[] => []) };
      const gateway = new ConnectGateway(base, connectGatewayArgs(config.connectGateway, connect, config.networkPolicy ?? {}, config.labels, config.global), ssh);
      this.connectGateway = gateway;
      for (const ws of config.workspaces ?? []) {
        this.workspaces.push(new SshWorkspace(objectName(base, "ws", ws.name), sshWorkspaceArgs(ws, gateway, config.namespace, base, config.labels, config.workspaceDefaults, config.global), ssh));
      }
      if (this.workspaces.length > 0) {
        this.sshConfig = pulumi.all(this.workspaces.map((ws) => ws.sshConfig)).apply((blocks) => blocks.join("\n"));
      }
    }

    if (config.ansibleForms) {
      this.ansibleForms = new AnsibleForms(base, ansibleFormsArgs(config.ansibleForms, this.namespace, config.labels, config.global), { parent: this });
      // The public URL when the app is exposed, else the in-cluster one.
      const expose = config.ansibleForms.expose;
      this.ansibleFormsUrl = expose ? pulumi.output(`${expose.tlsSecretName ? "https" : "http"}://${expose.host}`) : this.ansibleForms.url;
      this.ansibleFormsAdminPassword = this.ansibleForms.adminPassword && pulumi.secret(this.ansibleForms.adminPassword);
      this.ansibleFormsRteToken = this.ansibleForms.rteToken && pulumi.secret(this.ansibleForms.rteToken);
      this.ansibleFormsCaBundle = this.ansibleForms.caBundle === undefined ? undefined : pulumi.output(this.ansibleForms.caBundle);
    }
    if (config.remoteRte) {
      this.remoteRte = new RemoteRte(base, remoteRteArgs(config.remoteRte, this.namespace, config.labels, config.ansibleForms?.image?.tag, config.global), { parent: this });
    }

    this.registerOutputs({
      namespace: this.namespace,
      connectNamespace: this.connectNamespace,
      execGatewayUrl: this.execGatewayUrl,
      sshConfig: this.sshConfig,
      ansibleFormsUrl: this.ansibleFormsUrl,
      ansibleFormsAdminPassword: this.ansibleFormsAdminPassword,
      ansibleFormsRteToken: this.ansibleFormsRteToken,
      ansibleFormsCaBundle: this.ansibleFormsCaBundle,
    });
  }

  /** A namespace the stack owns: made when asked, with its default deny and DNS for every pod. */
  private ownNamespace(resourceName: string, namespace: string, create: boolean, base: string, labels: Record<string, string>, dns: InClusterPeer): pulumi.Output<string> {
    const made = create ? new k8s.core.v1.Namespace(`${resourceName}-namespace`, { metadata: { name: namespace, labels } }, { parent: this }) : undefined;
    namespaceNetworkPolicies(`${resourceName}-${namespace}`, base, namespace, labels, dns, { parent: this, ...(made ? { dependsOn: [made] } : {}) });
    return made ? made.metadata.name : pulumi.output(namespace);
  }
}
