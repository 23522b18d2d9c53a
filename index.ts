/**
 * The per-environment Pulumi program: `pulumi up -s <env>` deploys the stack described by the
 * `entryway:stack` object in Pulumi.<env>.yaml. The library itself is `components/` (the
 * package's main entry): its types are re-exported here, type-only, so that importing them adds
 * no stack outputs and creates no resources.
 */
import * as pulumi from "@pulumi/pulumi";
import { parseStackConfig, Stack } from "./components";

export type * from "./components";

const config = parseStackConfig(new pulumi.Config("entryway").getObject<unknown>("stack"));
const stack = new Stack(pulumi.getStack(), config);

export const namespace = stack.namespace;
/** The connect gateway's own namespace: its TLS Secret (connectGateway.tls.credentialName) goes there. */
export const connectNamespace = stack.connectNamespace;
/** The exec gateway's WebSocket URL (wss://host/v1/enter when exposed). */
export const execGatewayUrl = stack.execGatewayUrl;

/** The ~/.ssh/config blocks of the stack's SSH workspaces (see docs/ssh-workspaces.md). */
export const sshConfig = stack.sshConfig;
/** The AnsibleForms URL. */
export const ansibleFormsUrl = stack.ansibleFormsUrl;
/** The generated AnsibleForms admin password: a secret (`pulumi stack output --show-secrets`). */
export const ansibleFormsAdminPassword = stack.ansibleFormsAdminPassword;
/** The RTE token the app shares with its RTEs: a secret, for a second data centre's stack (docs/ansibleforms.md, the runbook). */
export const ansibleFormsRteToken = stack.ansibleFormsRteToken;
/** The CA bundle that signed the app's certificate (ansibleForms.expose.caBundle), for a second data centre's RemoteRte. */
export const ansibleFormsCaBundle = stack.ansibleFormsCaBundle;
