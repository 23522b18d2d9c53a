/**
 * The YAML platform repo (examples/yaml/Pulumi.yaml) deployed by the real Pulumi CLI v3.276.0 and
 * the real YAML language host (pulumi-language-yaml v1.25.0, scripts/realcp) to the real API
 * server, through the component provider; then destroyed.
 *
 * How the engine reaches the package here. A YAML program names resource types only; the YAML host
 * reports `entryway` as a package the program needs (pulumi-yaml pkg/server/server.go
 * GetRequiredPackages, from the resource types in pkg/pulumiyaml/packages.go
 * GetReferencedPackages) and loads its schema through the engine, which starts the provider
 * `pulumi-resource-entryway` (pulumi/pulumi sdk/go/common/workspace/plugins.go
 * getPluginInfoAndPath). That function looks first at the project's plugins, which include every
 * `packages:` entry naming a local folder (sdk/go/common/resource/plugin/host.go
 * collectPluginsFromPackages); a folder with no executable in it is run through the language its
 * PulumiPlugin.yaml names (plugin.go newPlugin: `runtime: nodejs`, so the nodejs host's
 * RunPlugin), and that host is refused by the Go module proxy. Without a project plugin, an
 * executable of that name on PATH is used ("ambient"; exec.LookPath). So the copy of the example
 * drops its `packages:` entry and PATH holds the test's stand-in for RunPlugin
 * (fixtures/component-plugin/launcher.mjs), started on the built checkout that entry names.
 *
 * Python (examples/python) cannot be deployed here: its language host is refused the same way
 * (docs/languages.md); test/provider/examples.test.ts checks it against schema.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse, stringify } from "yaml";
import { objectApi, objectExists } from "../../testkit/harness/control-plane";
import { repoRoot } from "../../testkit/harness/helm";
import { run as runSync } from "../../testkit/harness/npm";
import { run } from "../../testkit/harness/process";
import { realTool } from "../../testkit/harness/realcp";

const { kubeconfig } = inject("controlPlane");
const api = objectApi(kubeconfig);

const PASSPHRASE = "entryway-test-passphrase";
const LAUNCHER = path.join(repoRoot, "test", "real", "fixtures", "component-plugin", "launcher.mjs");

/** This suite's namespaces: the control plane is shared by every suite of test/real, each in namespaces of its own. */
const NAMESPACE_OF: Record<string, string> = {
  entryway: "yaml-entryway",
  "entryway-connect": "yaml-connect",
  "dev-alice": "yaml-alice",
  ansibleforms: "yaml-forms",
  "ansibleforms-rte": "yaml-rte",
};

type Program = {
  packages?: Record<string, string>;
  resources: Record<string, { type: string; properties: Record<string, unknown> }>;
} & Record<string, unknown>;

/** Namespace names (only as whole strings) renamed to this suite's. */
function renamed(value: unknown): unknown {
  if (typeof value === "string") return NAMESPACE_OF[value] ?? value;
  if (Array.isArray(value)) return value.map(renamed);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renamed(v)]));
  return value;
}

/**
 * examples/yaml/Pulumi.yaml, adapted where this machine forces it and nowhere else:
 * - no `packages:` entry: with it the engine would start the package through the nodejs language
 *   host's RunPlugin, which cannot be had here (see the header); the launcher on PATH stands in;
 * - the namespaces renamed to this suite's own (a control plane shared by the suites);
 * - the CONNECT gateway's LoadBalancer Service annotated `pulumi.com/skipAwait`: there is no load
 *   balancer here, and the Kubernetes provider would wait for an address nobody assigns (the
 *   same configuration change the dev stack's test makes, testkit/harness/stack-config.ts).
 */
export function adaptedExample(): Program {
  const program = parse(readFileSync(path.join(repoRoot, "examples", "yaml", "Pulumi.yaml"), "utf8")) as Program;
  delete program.packages;
  program.resources = renamed(program.resources) as Program["resources"];
  for (const resource of Object.values(program.resources)) {
    if (resource.type === "entryway:index:ConnectGateway") {
      resource.properties.serviceAnnotations = {
        ...(resource.properties.serviceAnnotations as Record<string, string> | undefined),
        "pulumi.com/skipAwait": "true",
      };
    }
  }
  return program;
}

interface Cli {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  pulumi(args: string[], cwd: string): Promise<{ ok: boolean; output: string; stdout: string }>;
}

/** The real `pulumi` with a file backend, passphrase secrets, nothing downloaded, and the component plugin of `packageDir` on PATH. */
function pulumiCli(packageDir: string): Cli {
  const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-yaml-"));
  const bin = path.join(dir, "bin");
  mkdirSync(bin);
  mkdirSync(path.join(dir, "state"));
  mkdirSync(path.join(dir, "home"));
  symlinkSync(LAUNCHER, path.join(bin, "pulumi-resource-entryway"));
  const pulumiBin = realTool("pulumi");
  const env: NodeJS.ProcessEnv = {
    PATH: [
      bin,
      realTool("pulumi-language-yaml"),
      realTool("pulumi-resource-kubernetes"),
      realTool("random-standin"),
      pulumiBin,
      path.dirname(process.execPath),
      process.env.PATH ?? "",
    ].join(path.delimiter),
    HOME: process.env.HOME ?? dir,
    PULUMI_HOME: path.join(dir, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(dir, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_SKIP_CONFIRMATIONS: "true",
    KUBECONFIG: kubeconfig,
    ENTRYWAY_COMPONENT_PACKAGE: packageDir,
  };
  return {
    dir,
    env,
    async pulumi(args, cwd) {
      const result = await run(path.join(pulumiBin, "pulumi"), [...args, "--non-interactive"], { cwd, env });
      return { ok: result.status === 0, output: `${result.stdout}${result.stderr}`, stdout: result.stdout };
    },
  };
}

async function expectOk(cli: Cli, args: string[], cwd: string): Promise<string> {
  const result = await cli.pulumi(args, cwd);
  if (!result.ok) throw new Error(`pulumi ${args.join(" ")} failed:\n${result.output.slice(-6000)}`);
  return result.stdout;
}

/** The flags of a non-interactive `pulumi up` or `pulumi destroy`. */
const UNATTENDED = ["--yes", "--skip-preview", "--suppress-progress"];

/** `pulumi stack init <name>` with the passphrase secrets provider. */
const initStack = (cli: Cli, name: string, dir: string) =>
  expectOk(cli, ["stack", "init", name, "--secrets-provider", "passphrase"], dir);

function project(cli: Cli, name: string, program: Program): string {
  const dir = path.join(cli.dir, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "Pulumi.yaml"), stringify(program));
  return dir;
}

const exists = (object: KubernetesObject) => objectExists(api, object);

interface StateResource {
  type: string;
  custom?: boolean;
  outputs?: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } };
}

describe("examples/yaml on the real engine and the real YAML language host", () => {
  let cli: Cli;
  let dir: string;
  let kubernetesObjects: KubernetesObject[] = [];

  beforeAll(async () => {
    // The checkout a `packages:` entry names must be built (docs/languages.md): run-plugin loads `main`.
    const build = runSync("npm", ["run", "build"], repoRoot);
    if (!build.ok) throw new Error(`npm run build failed: ${build.output}`);
    cli = pulumiCli(repoRoot);
    dir = project(cli, "yaml-example", adaptedExample());
    for (const name of Object.values(NAMESPACE_OF))
      await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    await initStack(cli, "yaml", dir);
  });

  afterAll(() => {
    if (cli) rmSync(cli.dir, { recursive: true, force: true });
  });

  it("pulumi up deploys the program's five components; every Kubernetes object in the state is on the API server; the generated secrets are encrypted in the state file", async () => {
    const up = await expectOk(cli, ["up", ...UNATTENDED], dir);
    expect(up).toMatch(/entryway:index:ConnectGateway/);
    const state = JSON.parse(await expectOk(cli, ["stack", "export"], dir)) as {
      deployment: { resources: StateResource[] };
    };
    const types = new Set(state.deployment.resources.map((r) => r.type));
    for (const type of [
      "entryway:index:ConnectGateway",
      "entryway:index:SshWorkspace",
      "entryway:index:ExecGateway",
      "entryway:index:AnsibleForms",
      "entryway:index:RemoteRte",
      "pulumi:providers:entryway",
    ]) {
      expect(types).toContain(type);
    }
    kubernetesObjects = state.deployment.resources
      .filter((r) => r.custom && r.type.startsWith("kubernetes:") && r.outputs?.kind)
      .map((r) => ({
        apiVersion: r.outputs!.apiVersion!,
        kind: r.outputs!.kind!,
        metadata: { name: r.outputs!.metadata!.name!, namespace: r.outputs!.metadata?.namespace },
      }));
    expect(kubernetesObjects.map((o) => o.kind)).toEqual(
      expect.arrayContaining(["Deployment", "StatefulSet", "Service", "NetworkPolicy"]),
    );
    const missing: string[] = [];
    for (const object of kubernetesObjects)
      if (!(await exists(object)))
        missing.push(`${object.kind} ${object.metadata?.namespace}/${object.metadata?.name}`);
    expect(missing).toEqual([]);
    const outputs = JSON.parse(await expectOk(cli, ["stack", "output", "--json"], dir)) as Record<string, unknown>;
    expect(String(outputs.sshConfig)).toMatch(/ProxyCommand/);
    expect(outputs.execUrl).toBe("wss://exec.example.com/v1/enter");
    expect(outputs.formsAdminPassword).toBe("[secret]");

    // The generated secrets: the admin password (a secret output), and every value of the Secrets
    // AnsibleForms and the RTE wrote (passwords, keys, the RTE token and its copy), read back from
    // the API server. None is in the state file in plain text.
    const revealed = JSON.parse(await expectOk(cli, ["stack", "output", "--json", "--show-secrets"], dir)) as Record<
      string,
      unknown
    >;
    const tokens: string[] = [];
    for (const namespace of ["yaml-forms", "yaml-rte"]) {
      const secrets = (await api.list("v1", "Secret", namespace)).items as (KubernetesObject & {
        data?: Record<string, string>;
      })[];
      // Generated values only (the random ones are 24 to 64 characters); names and usernames are shorter.
      for (const secret of secrets)
        tokens.push(
          ...Object.values(secret.data ?? {})
            .map((value) => Buffer.from(value, "base64").toString())
            .filter((value) => value.length >= 16),
        );
    }
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    const stateFile = readFileSync(
      path.join(cli.dir, "state", ".pulumi", "stacks", "entryway-yaml-example", "yaml.json"),
      "utf8",
    );
    for (const secret of [revealed.formsAdminPassword, ...tokens]) {
      expect(typeof secret).toBe("string");
      expect((secret as string).length).toBeGreaterThanOrEqual(16);
      expect(stateFile.includes(secret as string)).toBe(false);
    }
  });

  it("pulumi destroy removes every object it made", async () => {
    await expectOk(cli, ["destroy", ...UNATTENDED], dir);
    const left: string[] = [];
    for (const object of kubernetesObjects)
      if (await exists(object)) left.push(`${object.kind} ${object.metadata?.namespace}/${object.metadata?.name}`);
    // Namespaced objects go at once; a StatefulSet's volume claims are kept by design (its retention policy).
    expect(left.filter((key) => !key.startsWith("PersistentVolumeClaim"))).toEqual([]);
  });
});

describe("the example as written, with its packages: entry", () => {
  it("makes the engine start the package through the nodejs language host, which is not on this machine, and pulumi up says so", async () => {
    const cli = pulumiCli(repoRoot);
    try {
      const program = { ...adaptedExample(), packages: { entryway: repoRoot } };
      const dir = project(cli, "yaml-packages", program);
      await initStack(cli, "packages", dir);
      const up = await cli.pulumi(["up", ...UNATTENDED], dir);
      expect(up.ok).toBe(false);
      // The stand-in is on PATH here too: a project plugin comes first (plugins.go getPluginInfoAndPath).
      expect(up.output).toMatch(
        /failed to load plugin [^:\n]*\/pulumi-resource-entryway: loading runtime: no language plugin 'pulumi-language-nodejs' found in the workspace or on your \$PATH/,
      );
    } finally {
      rmSync(cli.dir, { recursive: true, force: true });
    }
  });
});

describe("the component plugin stand-in fails loudly", () => {
  it("a package folder without its build makes pulumi up fail with run-plugin's message, and deploys nothing", async () => {
    const unbuilt = mkdtempSync(path.join(os.tmpdir(), "entryway-unbuilt-"));
    try {
      // The checkout as cloned, before `npm run build`: its manifest and dependencies, no dist/.
      for (const file of ["package.json", "PulumiPlugin.yaml"])
        copyFileSync(path.join(repoRoot, file), path.join(unbuilt, file));
      symlinkSync(path.join(repoRoot, "node_modules"), path.join(unbuilt, "node_modules"));
      const cli = pulumiCli(unbuilt);
      try {
        const dir = project(cli, "yaml-unbuilt", {
          name: "entryway-yaml-unbuilt",
          runtime: "yaml",
          resources: {
            connect: {
              type: "entryway:index:ConnectGateway",
              properties: { namespace: "yaml-unbuilt", hostname: "ssh.example.com" },
            },
          },
        });
        await initStack(cli, "unbuilt", dir);
        const up = await cli.pulumi(["up", ...UNATTENDED], dir);
        expect(up.ok).toBe(false);
        // run-plugin's own words, passed through by the engine, and the engine's.
        expect(up.output).toMatch(/Cannot find module '[^']*\/dist\/components\/index\.js'/);
        expect(up.output).toMatch(
          /Error loading schema from plugin: could not read plugin \[[^\]]*pulumi-resource-entryway\]: exit status 32/,
        );
        const state = JSON.parse(await expectOk(cli, ["stack", "export"], dir)) as {
          deployment: { resources?: StateResource[] };
        };
        expect(
          (state.deployment.resources ?? []).filter(
            (r) => r.type.startsWith("entryway:") || r.type.startsWith("kubernetes:"),
          ),
        ).toEqual([]);
      } finally {
        rmSync(cli.dir, { recursive: true, force: true });
      }
    } finally {
      rmSync(unbuilt, { recursive: true, force: true });
    }
  });
});
