/**
 * Platform repos import the components from the published package. This packs the package as
 * npm would publish it (`npm pack`, which builds dist/ through prepack), and the one workspace
 * package it depends on (@entryway/ssh-config, published with it), installs both tarballs with
 * npm into a scratch project (the other declared dependencies come from the registry or npm's
 * cache), and checks that `import { ExecGateway } from "entryway"` type-checks, that a wrong
 * argument does not, and that the compiled program creates the gateway's resources under
 * Pulumi's own mocks, with Node's require of ES modules turned off (the library is CommonJS and
 * loads nothing that is not), and that the package's command, entryway-diff, runs from the
 * platform repo.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../testkit/harness/helm";
import { npmPack, run } from "../../testkit/harness/npm";

const scratch = mkdtempSync(path.join(os.tmpdir(), "entryway-pack-"));
const project = path.join(scratch, "platform-repo");
const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc");
let packedFiles: string[] = [];
let sshConfigFiles: string[] = [];

const CONSUMER = `
import * as pulumi from "@pulumi/pulumi";
import { ConnectGateway, ExecGateway, SshWorkspace, Stack, type ExecGatewayArgs } from "entryway";

const created: string[] = [];
pulumi.runtime.setMocks(
  {
    newResource: (args) => {
      created.push(args.type + " " + String(args.inputs.metadata?.namespace ?? "-") + "/" + String(args.inputs.metadata?.name ?? args.name));
      return { id: args.name + "-id", state: args.inputs };
    },
    call: (args) => args.inputs,
  },
  "platform",
  "dev",
  false,
);

const args: ExecGatewayArgs = { namespace: "access", targetNamespaces: ["team-a"] };
const gateway = new ExecGateway("platform", args);
new Stack("whole", { namespace: "stack-ns", name: "whole" });
gateway.url.apply((url) => created.push("url " + url));
const connect = new ConnectGateway("ssh", { namespace: "access", hostname: "ssh.example.com" });
const workspace = new SshWorkspace("alice", { gateway: connect.registration, namespace: "team-a", authorizedKeys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA alice@laptop"] });
workspace.sshConfig.apply((block) => created.push("sshConfig " + block.split("\\n").find((line) => line.includes("ProxyCommand"))!.trim()));
process.on("beforeExit", () => {
  if (created.length === 0) return;
  console.log(JSON.stringify({ created: created.splice(0).sort() }));
});
`;

beforeAll(() => {
  const [library] = npmPack(scratch);
  const [sshConfig] = npmPack(scratch, ["@entryway/ssh-config"]);
  packedFiles = library.files;
  sshConfigFiles = sshConfig.files;
  mkdirSync(project);
  writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "platform-repo", version: "1.0.0", private: true }),
  );
  const install = run(
    "npm",
    ["install", library.tarball, sshConfig.tarball, "--prefer-offline", "--no-audit", "--no-fund"],
    project,
  );
  if (!install.ok) throw new Error(`npm install of the tarball failed: ${install.output}`);
  writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: "ES2022",
        module: "node16",
        moduleResolution: "node16",
        esModuleInterop: true,
        skipLibCheck: true,
        outDir: "out",
        types: ["node"],
        typeRoots: [path.join(repoRoot, "node_modules/@types")],
      },
      files: ["index.ts"],
    }),
  );
}, 600_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the packed package", () => {
  it("ships the built library, its types, the chart and the docs README links to, and no tests or sources", () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        "dist/components/index.js",
        "dist/components/index.d.ts",
        "dist/components/exec-gateway/index.d.ts",
        "dist/bin/entryway-diff.js",
        "charts/entryway/Chart.yaml",
        "README.md",
        "docs/ssh-workspaces.md",
        "docs/reference.md",
      ]),
    );
    expect(
      packedFiles.filter(
        (f) =>
          /^(test|scripts|policies|gateway|packages)\//.test(f) ||
          /(^|\/)gateway\//.test(f) ||
          (/\.ts$/.test(f) && !f.endsWith(".d.ts")),
      ),
    ).toEqual([]);
  });

  it("takes the ssh config writer from @entryway/ssh-config, a CommonJS package of its own, not from the gateway's sources", () => {
    expect(sshConfigFiles.sort()).toEqual(["dist/index.d.ts", "dist/index.js", "package.json"]);
    const installed = path.join(project, "node_modules/@entryway/ssh-config/package.json");
    expect(JSON.parse(readFileSync(installed, "utf8")).type ?? "commonjs").toBe("commonjs");
    expect(
      readFileSync(path.join(project, "node_modules/entryway/dist/components/ssh/ssh-workspace.js"), "utf8"),
    ).toContain('require("@entryway/ssh-config")');
  });

  it("installs into a scratch project with its declared dependencies", () => {
    expect(readdirSync(path.join(project, "node_modules/entryway/dist/components"))).toContain("index.js");
    expect(readdirSync(path.join(project, "node_modules/@pulumi"))).toEqual(
      expect.arrayContaining(["pulumi", "kubernetes", "random"]),
    );
  });

  it('type-checks and runs `import { ExecGateway } from "entryway"`, creating the gateway\'s resources', () => {
    writeFileSync(path.join(project, "index.ts"), CONSUMER);
    const compiled = run("node", [tsc, "-p", "tsconfig.json"], project);
    expect(compiled.output).toBe("");
    expect(compiled.ok).toBe(true);
    const ran = run("node", ["--no-experimental-require-module", "out/index.js"], project);
    expect(ran.ok, ran.output).toBe(true);
    const result = JSON.parse(ran.stdout.trim().split("\n").pop()!) as { created: string[] };
    expect(result.created).toEqual(
      expect.arrayContaining([
        "entryway:index:ExecGateway -/platform",
        "kubernetes:apps/v1:Deployment access/platform-exec-gateway",
        "kubernetes:rbac.authorization.k8s.io/v1:Role team-a/platform-exec-gateway",
        "kubernetes:core/v1:Namespace -/stack-ns",
        "url ws://platform-exec-gateway.access.svc.cluster.local/v1/enter",
        expect.stringMatching(/^sshConfig ProxyCommand entryway connect-proxy ssh\.example\.com:\d+ %h %p$/),
      ]),
    );
  });

  it("ships entryway-diff as a command of the platform repo (npx entryway-diff): exit 1 with --exit-code when manifests differ, 0 when not", () => {
    const manifest = (replicas: number, keys: "sorted" | "reversed") => {
      const lines = ["apiVersion: apps/v1", "kind: Deployment", "metadata: { name: web, namespace: team-a }"];
      return `${(keys === "sorted" ? lines : [...lines].reverse()).join("\n")}\nspec: { replicas: ${replicas} }\n`;
    };
    writeFileSync(path.join(project, "before.yaml"), manifest(1, "sorted"));
    writeFileSync(path.join(project, "same.yaml"), manifest(1, "reversed"));
    writeFileSync(path.join(project, "after.yaml"), manifest(2, "sorted"));
    const diff = (...args: string[]) => run("npx", ["--no-install", "entryway-diff", ...args], project);
    const changed = diff("--exit-code", "before.yaml", "after.yaml");
    expect(changed.status, changed.output).toBe(1);
    expect(changed.stdout).toContain(
      "1 object differs from before.yaml to after.yaml: 0 added, 1 changed, 0 removed\n",
    );
    expect(changed.stdout).toContain("-  replicas: 1\n+  replicas: 2\n");
    const same = diff("--exit-code", "--json", "before.yaml", "same.yaml");
    expect(same.status, same.output).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ changed: false, objects: [] });
  });

  it("rejects wrong arguments at compile time (the types ship, not any)", () => {
    writeFileSync(
      path.join(project, "index.ts"),
      `import { ExecGateway } from "entryway";\nnew ExecGateway("x", { namespace: "a", targetNamespaces: "team-a" });\n`,
    );
    const compiled = run("node", [tsc, "-p", "tsconfig.json", "--noEmit"], project);
    expect(compiled.ok).toBe(false);
    expect(compiled.output).toMatch(
      /targetNamespaces.*string\[\]|Type 'string' is not assignable to type 'string\[\]'/,
    );
  });

  it("keeps the components' helpers out of its API: neither the entry nor a deep import has objectName or EXEC_RULES", () => {
    writeFileSync(
      path.join(project, "index.ts"),
      `import { objectName } from "entryway";\nimport { EXEC_RULES } from "entryway/dist/components/exec-gateway";\nconsole.log(objectName("a"), EXEC_RULES);\n`,
    );
    const compiled = run("node", [tsc, "-p", "tsconfig.json", "--noEmit"], project);
    expect(compiled.ok).toBe(false);
    expect(compiled.output).toMatch(
      /index\.ts\(1,\d+\): error TS2305: Module '"entryway"' has no exported member 'objectName'/,
    );
    expect(compiled.output).toMatch(
      /index\.ts\(2,\d+\): error TS2305: Module '"entryway\/dist\/components\/exec-gateway"' has no exported member 'EXEC_RULES'/,
    );
  });
});
