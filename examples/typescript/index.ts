/**
 * An SSH workspace behind its CONNECT gateway, the exec gateway, and AnsibleForms with a remote
 * RTE, from the Entryway npm package: the program of examples/yaml in TypeScript. The repository's
 * type-check (tsconfig.json, where "entryway" resolves to components/index.ts) compiles it.
 */
import { AnsibleForms, ConnectGateway, ExecGateway, RemoteRte, SshWorkspace } from "entryway";

const connect = new ConnectGateway("connect", {
  namespace: "entryway-connect",
  hostname: "ssh.example.com",
  serviceType: "LoadBalancer",
  allowedSourceRanges: ["203.0.113.0/24"],
});

const alice = new SshWorkspace("alice", {
  gateway: connect.registration,
  namespace: "dev-alice",
  user: "alice",
  authorizedKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGV4YW1wbGUga2V5IGZvciBhbGljZSBvbmx5 alice@example.com"],
  storage: { size: "20Gi" },
});

const exec = new ExecGateway("exec", {
  namespace: "entryway",
  targetNamespaces: ["dev-alice"],
  authorizer: "kubernetes",
  exposure: { kind: "istio", host: "exec.example.com", tlsSecretName: "exec-example-com-tls" },
});

// AnsibleForms whose runner (RTE) runs elsewhere, and that RTE: it dials the app with the token
// the app generated (a secret output; it stays one in the RTE's Secret).
const forms = new AnsibleForms("forms", { namespace: "ansibleforms", rte: { mode: "remote" } });
new RemoteRte("dc2", {
  namespace: "ansibleforms-rte",
  appUrl: forms.url,
  // The app's in-cluster Service is plain http: allowed here, explicitly.
  allowInsecureAppUrl: true,
  token: forms.rteToken,
});

export const sshConfig = alice.sshConfig;
export const execUrl = exec.url;
export const formsUrl = forms.url;
export const formsAdminPassword = forms.adminPassword;
