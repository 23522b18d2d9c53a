/**
 * A platform team's own repository, in TypeScript, importing the PACKED npm tarball (`npm pack`, then
 * `npm install` of the tarballs into a scratch project, as from the registry) and deployed by the
 * real engine to the real API server: an exec gateway, a CONNECT gateway with one workspace, and
 * AnsibleForms with an outbound RTE; then destroyed. Its generated secrets stay secret in the state.
 *
 * Python and YAML platform repos (examples/python, examples/yaml) reach the components through the
 * component provider, which Pulumi starts with the nodejs language host's RunPlugin: that host
 * cannot be had here (scripts/realcp/pulumi/recipe.sh). examples/yaml is deployed by
 * languages.test.ts with a stand-in for RunPlugin; examples/python also needs the python host, also
 * refused, and is checked against schema.json only (test/provider/examples.test.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { npmPack, run } from "../../testkit/harness/npm";
import { PulumiStack } from "../../testkit/harness/pulumi-engine";

const { kubeconfig } = inject("controlPlane");

const PROGRAM = `
import { AnsibleForms, ConnectGateway, ExecGateway, RemoteRte, SshWorkspace } from "entryway";

// An exec gateway entering the team's namespace.
const exec = new ExecGateway("platform", { namespace: "platform-access", targetNamespaces: ["platform-team-a"] });
// The CONNECT gateway (no load balancer on this cluster: the Service does not wait for one) and a workspace.
const connect = new ConnectGateway("ssh", {
  namespace: "platform-connect",
  hostname: "ssh.example.com",
  serviceAnnotations: { "pulumi.com/skipAwait": "true" },
});
const alice = new SshWorkspace("alice", {
  gateway: connect.registration,
  namespace: "platform-team-a",
  authorizedKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqHgiy0GmQ2fM0zVj8Ff7R2xjH5l6mQfC1tq7g0nW9e alice@laptop"],
});
// AnsibleForms with no sidecar, and an outbound RTE in another namespace that dials it.
const forms = new AnsibleForms("forms", { namespace: "platform-forms", rte: { mode: "remote" } });
const rte = new RemoteRte("dc2", {
  namespace: "platform-rte",
  appUrl: forms.url,
  // The app's in-cluster Service is plain http: allowed here, explicitly.
  allowInsecureAppUrl: true,
  token: forms.rteToken,
});

export const execGatewayUrl = exec.url;
export const sshConfig = alice.sshConfig;
export const formsUrl = forms.url;
export const adminPassword = forms.adminPassword;
export const rteToken = forms.rteToken;
export const rteName = rte.urn;
`;

const NAMESPACES = ["platform-access", "platform-connect", "platform-team-a", "platform-forms", "platform-rte"];

describe("a TypeScript platform repo importing the packed package, on the real engine", () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-platform-"));
  const project = path.join(scratch, "platform-repo");
  let stack: PulumiStack;

  beforeAll(async () => {
    const [library] = npmPack(scratch);
    const [sshConfig] = npmPack(scratch, ["@entryway/ssh-config"]);
    mkdirSync(project);
    writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({ name: "platform-repo", version: "1.0.0", private: true, type: "module" }),
    );
    const install = run(
      "npm",
      ["install", library!.tarball, sshConfig!.tarball, "--prefer-offline", "--no-audit", "--no-fund"],
      project,
    );
    if (!install.ok) throw new Error(`npm install of the tarballs failed: ${install.output}`);
    writeFileSync(path.join(project, "index.ts"), PROGRAM);
    stack = new PulumiStack({
      stackName: "platform",
      config: {},
      kubeconfig,
      program: path.join(project, "index.ts"),
      projectDir: project,
      projectName: "platform-repo",
    });
    // The namespaces are the platform team's: made before, as a cluster admin would.
    const { objectApi } = await import("../../testkit/harness/control-plane");
    const api = objectApi(kubeconfig);
    for (const name of NAMESPACES) await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  });

  afterAll(() => {
    stack?.remove();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("pulumi up deploys the four components; the generated secrets are encrypted in the state file", async () => {
    const up = await stack.expect("up");
    const types = new Set(up.steps.filter((s) => s.op === "create").map((s) => s.type));
    for (const type of [
      "entryway:index:ExecGateway",
      "entryway:index:ConnectGateway",
      "entryway:index:SshWorkspace",
      "entryway:index:AnsibleForms",
      "entryway:index:RemoteRte",
    ])
      expect(types).toContain(type);
    expect(up.outputs.adminPassword?.secret).toBe(true);
    expect(up.outputs.rteToken?.secret).toBe(true);
    const state = readFileSync(stack.stateFile(), "utf8");
    for (const secret of [up.outputs.adminPassword!.value, up.outputs.rteToken!.value]) {
      expect(typeof secret).toBe("string");
      expect((secret as string).length).toBeGreaterThanOrEqual(16);
      expect(state.includes(secret as string)).toBe(false);
    }
    expect(String(up.outputs.sshConfig?.value)).toMatch(/ProxyCommand/);
  });

  it("pulumi destroy removes it all", async () => {
    const destroy = await stack.expect("destroy");
    expect(destroy.summary.delete).toBeGreaterThan(10);
  });
});
