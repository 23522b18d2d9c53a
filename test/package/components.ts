/** The package's components: the Pulumi resource types `entryway:index:<name>` it provides, each exported by components/index.ts. */
export const COMPONENTS = [
  "ExecGateway",
  "ConnectGateway",
  "SshWorkspace",
  "AnsibleForms",
  "RemoteRte",
  "RunnerSeed",
  "Stack",
];
