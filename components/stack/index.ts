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
import type { StackContext } from "../shared/stack-context";
import { connectGatewayArgs, connectNamespace, sshWorkspaceArgs } from "../ssh/config";
import { ConnectGateway } from "../ssh/connect-gateway";
import { SshWorkspace } from "../ssh/ssh-workspace";
import type { StackConfig } from "./config";

export { parseStackConfig, StackConfigError, type StackConfig } from "./config";

/** The default base of object names: the chart's usual release name, so both front ends agree. */
export const DEFAULT_STACK_NAME = "entryway";

// Its outputs are the stack's values, not its parts: Pulumi's component analyzer refuses outputs
// that reference components outside @pulumi/* packages (pulumi/pulumi
// sdk/nodejs/provider/experimental/analyzer.ts, getResourceType).
/**
 * The whole Entryway stack from one configuration, as the chart deploys it: the namespaces, the
 * exec gateway, the SSH CONNECT gateway and its workspaces, and AnsibleForms with its RTE, each part
 * when its section is given. Its outputs are the stack's values: the exec gateway's URL, the
 * workspaces' ~/.ssh/config blocks, the AnsibleForms URL and secrets.
 */
export class Stack extends pulumi.ComponentResource {
  /** The namespace the stack's workloads run in. */
  public readonly namespace: pulumi.Output<string>;
  /** The connect gateway's own namespace, when the config has a `connectGateway` section. */
  public readonly connectNamespace?: string;
  /** Every workspace's ~/.ssh/config block, when there are workspaces. */
  public readonly sshConfig?: pulumi.Output<string>;
  /** The exec gateway's WebSocket URL (public when exposed), when deployed. */
  public readonly execGatewayUrl?: pulumi.Output<string>;
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

  // The parameter is `args`: Pulumi's component analyzer finds a component's inputs only there
  // (pulumi/pulumi sdk/nodejs/provider/experimental/analyzer.ts, analyzeComponent).
  constructor(name: string, args: StackConfig, opts?: pulumi.ComponentResourceOptions) {
    super("entryway:index:Stack", name, {}, opts);
    const base = args.name ?? DEFAULT_STACK_NAME;
    const labels = standardLabels({ name: "entryway", instance: base }, args.labels);

    const dns = args.networkPolicy?.dns ?? DEFAULT_DNS;
    const context: StackContext = { labels: args.labels, global: args.global, dns };
    const own = this.ownNamespace(name, args.namespace, args.createNamespace ?? true, base, labels, dns);
    this.namespace = own.name;

    if (args.execGateway) {
      // The stack's other namespace (the CONNECT gateway's) is refused as a target, as its own is.
      const owned = args.connectGateway ? [connectNamespace(args.connectGateway, args.namespace)] : [];
      // The namespace is plain here: a target list naming it fails now, not at deployment.
      validateExecGatewayArgs(base, execGatewayArgs(args.execGateway, args.namespace, { ownedNamespaces: owned }));
      this.execGatewayUrl = new ExecGateway(
        base,
        execGatewayArgs(args.execGateway, this.namespace, { ...context, ownedNamespaces: owned }),
        { parent: this },
      ).url;
    }

    if (args.workspaces?.length && !args.connectGateway) {
      throw new Error("entryway:stack: workspaces need a connectGateway section (they register on its CONNECT port)");
    }
    if (args.connectGateway) {
      const connect = connectNamespace(args.connectGateway, args.namespace);
      this.connectNamespace = connect;
      const connectOwn = this.ownNamespace(
        `${name}-connect`,
        connect,
        args.connectGateway.createNamespace ?? true,
        base,
        labels,
        dns,
      );
      // After both namespaces, when the stack makes them: the Namespace resources themselves, not
      // an Output of their names, so that every workspace's options do not carry (and gather) one
      // more Output: 83 MiB of the offline render's peak at 1,000 workspaces (docs/testing.md).
      const ssh = { parent: this, dependsOn: [...own.made, ...connectOwn.made] };
      const workspaceName = (ws: { name: string }) => objectName(base, "ws", ws.name);
      const declared = (args.workspaces ?? []).map((ws) => ({
        namespace: ws.namespace ?? args.namespace,
        name: workspaceName(ws),
      }));
      const gateway = new ConnectGateway(
        base,
        connectGatewayArgs(args.connectGateway, connect, args.networkPolicy ?? {}, {
          labels: args.labels,
          global: args.global,
          workspaces: declared,
        }),
        ssh,
      );
      const workspaces = (args.workspaces ?? []).map(
        (ws) =>
          new SshWorkspace(
            workspaceName(ws),
            sshWorkspaceArgs(ws, gateway.registration, {
              stackNamespace: args.namespace,
              instance: base,
              labels: args.labels,
              defaults: args.workspaceDefaults,
              global: args.global,
            }),
            ssh,
          ),
      );
      if (workspaces.length > 0) {
        this.sshConfig = pulumi.all(workspaces.map((ws) => ws.sshConfig)).apply((blocks) => blocks.join("\n"));
      }
    }

    if (args.ansibleForms) {
      const ansibleForms = new AnsibleForms(base, ansibleFormsArgs(args.ansibleForms, this.namespace, context), {
        parent: this,
      });
      // The public URL when the app is exposed, else the in-cluster one.
      const expose = args.ansibleForms.expose;
      this.ansibleFormsUrl = expose
        ? pulumi.output(`${expose.tlsSecretName ? "https" : "http"}://${expose.host}`)
        : ansibleForms.url;
      this.ansibleFormsAdminPassword = ansibleForms.adminPassword && pulumi.secret(ansibleForms.adminPassword);
      this.ansibleFormsRteToken = ansibleForms.rteToken && pulumi.secret(ansibleForms.rteToken);
      this.ansibleFormsCaBundle =
        ansibleForms.caBundle === undefined ? undefined : pulumi.output(ansibleForms.caBundle);
    }
    if (args.remoteRte) {
      new RemoteRte(
        base,
        remoteRteArgs(args.remoteRte, this.namespace, { ...context, appTag: args.ansibleForms?.image?.tag }),
        { parent: this },
      );
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

  /**
   * A namespace the stack owns: made when asked, with its default deny and DNS for every pod. Its
   * name (an Output of the Namespace when made) and the Namespace resource, if any, for `dependsOn`.
   */
  private ownNamespace(
    resourceName: string,
    namespace: string,
    create: boolean,
    base: string,
    labels: Record<string, string>,
    dns: InClusterPeer,
  ): { name: pulumi.Output<string>; made: k8s.core.v1.Namespace[] } {
    const made = create
      ? [
          new k8s.core.v1.Namespace(
            `${resourceName}-namespace`,
            { metadata: { name: namespace, labels } },
            { parent: this },
          ),
        ]
      : [];
    namespaceNetworkPolicies(`${resourceName}-${namespace}`, base, namespace, labels, dns, {
      parent: this,
      dependsOn: made,
    });
    return { name: made[0]?.metadata.name ?? pulumi.output(namespace), made };
  }
}
