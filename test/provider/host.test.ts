/**
 * The Entryway component package served as the Pulumi CLI serves it to a Python, Go or YAML
 * program: the repository folder (PulumiPlugin.yaml, `runtime: nodejs`) started with
 * @pulumi/pulumi's run-plugin launcher, after `npm run build` (run-plugin requires the package's
 * `main`, dist/components/index.js), and driven over the ResourceProvider gRPC service on
 * loopback. GetSchema must answer the checked-in schema.json; Construct of each of the seven
 * components, against the resource-monitor stand-in (testkit/harness/provider-host.ts), must register
 * the same children (types, names, parents, inputs, secret inputs) as the TypeScript constructor
 * makes under the offline runtime.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AnsibleForms,
  ConnectGateway,
  ExecGateway,
  type ExecGatewayArgs,
  parseStackConfig,
  RemoteRte,
  RunnerSeed,
  SshWorkspace,
  Stack,
} from "../../components";
import { SIDECAR_RUNNER } from "../ansibleforms/helpers";
import { repoRoot } from "../../testkit/harness/helm";
import { run } from "../../testkit/harness/npm";
import { render, type RecordedResource } from "../../testkit/harness/pulumi";
import {
  construct,
  getSchema,
  secretInput,
  startComponentProviderHost,
  startResourceMonitor,
  type ComponentProviderHost,
  type ResourceMonitor,
} from "../../testkit/harness/provider-host";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqHgiy0GmQ2fM0zVj8Ff7R2xjH5l6mQfC1tq7g0nW9e alice@laptop";
const RTE_TOKEN = "rte-token-from-the-platform-0123456789";
const devStack = parseStackConfig(
  parse(readFileSync(path.join(repoRoot, "Pulumi.dev.yaml"), "utf8")).config["entryway:stack"],
);

let monitor: ResourceMonitor;
let host: ComponentProviderHost;

beforeAll(async () => {
  // What `npm pack` (prepack) builds too: the package's main entry.
  const build = run("npm", ["run", "build"], repoRoot);
  if (!build.ok) throw new Error(`npm run build failed: ${build.output}`);
  monitor = await startResourceMonitor();
  host = await startComponentProviderHost(repoRoot, monitor.address);
}, 300_000);

afterAll(async () => {
  host?.stop();
  await monitor?.close();
});

/** A resource by its type and name only (the last type of a URN's type chain, and its name). */
function shortId(urn: string): string {
  const [, , qualifiedType, ...name] = urn.split("::");
  return `${qualifiedType.split("$").pop()}::${name.join("::")}`;
}

/**
 * The component's descendants as they are compared: type, name, parent (by
 * type and name), inputs and secret inputs. Not the URNs: Pulumi's mock monitor, under the offline
 * runtime, builds a grandchild's URN from its parent's last type only (runtime/mocks.js `newUrn`),
 * where the engine takes the parent's whole type chain (pkg/resource/deploy/deployment.go
 * `generateURN`), as the stand-in does.
 */
function descendants(resources: readonly RecordedResource[], type: string, name: string) {
  return resources
    .filter((r) => !(r.type === type && r.name === name))
    .map((r) => ({
      type: r.type,
      name: r.name,
      parent: r.parent && shortId(r.parent),
      custom: r.custom,
      inputs: r.inputs,
      secretPaths: r.secretPaths,
    }))
    .sort((a, b) => `${a.parent} ${a.type}::${a.name}`.localeCompare(`${b.parent} ${b.type}::${b.name}`));
}

async function expectSameChildren(
  type: string,
  name: string,
  wireInputs: Record<string, unknown>,
  constructor: () => unknown,
  dependencies?: Record<string, string[]>,
): Promise<Record<string, unknown>> {
  const constructed = await construct(host, monitor, { type, name, inputs: wireInputs, dependencies });
  const offline = await render(constructor);
  expect(constructed.urn).toBe(`urn:pulumi:test::entryway::${type}::${name}`);
  const hosted = descendants(constructed.registrations, type, name);
  expect(hosted.length).toBeGreaterThan(0);
  expect(hosted).toEqual(descendants(offline.resources, type, name));
  return constructed.state;
}

describe("the Entryway package served by Pulumi's component provider host", () => {
  it("GetSchema answers the checked-in schema.json", async () => {
    expect(await getSchema(host)).toEqual(JSON.parse(readFileSync(path.join(repoRoot, "schema.json"), "utf8")));
  });

  it("ConnectGateway and an SshWorkspace given its registration output, as a YAML program chains them", async () => {
    let offlineGateway: ConnectGateway | undefined;
    const gateway = await expectSameChildren(
      "entryway:index:ConnectGateway",
      "entryway",
      { namespace: "dev-connect", hostname: "ssh.example.com" },
      () => {
        offlineGateway = new ConnectGateway("entryway", { namespace: "dev-connect", hostname: "ssh.example.com" });
      },
    );
    expect(gateway.registration).toEqual(offlineGateway!.registration);
    const workspace = await expectSameChildren(
      "entryway:index:SshWorkspace",
      "entryway-ws-alice",
      { gateway: gateway.registration, namespace: "dev", authorizedKeys: [KEY] },
      () =>
        new SshWorkspace("entryway-ws-alice", {
          gateway: offlineGateway!.registration,
          namespace: "dev",
          authorizedKeys: [KEY],
        }),
      // The engine names the gateway the registration came from, so the component gets an Output
      // (found by the real engine: test/real/languages.test.ts).
      { gateway: ["urn:pulumi:test::entryway::entryway:index:ConnectGateway::entryway"] },
    );
    expect(workspace.sshConfig).toContain("ssh.example.com");
  });

  it("ExecGateway", async () => {
    const args: ExecGatewayArgs = {
      namespace: "entryway",
      targetNamespaces: ["team-a"],
      authorizer: "webhook",
      webhook: { urlSecret: { name: "console", key: "url" } },
    };
    await expectSameChildren(
      "entryway:index:ExecGateway",
      "entryway",
      { ...args },
      () => new ExecGateway("entryway", args),
    );
  });

  it("ExecGateway with its webhook URL a secret inside the webhook object, as a Python or YAML program passes it", async () => {
    const hook = "https://console.example/auth?key=hunter2";
    const wire = {
      namespace: "entryway",
      targetNamespaces: ["team-a"],
      authorizer: "webhook",
      webhook: { url: secretInput(hook), timeoutMs: 5000 },
    };
    // The host hands the object over as one secret Output; the offline run is given the same.
    await expectSameChildren(
      "entryway:index:ExecGateway",
      "hooked",
      wire,
      () =>
        new ExecGateway("hooked", {
          ...wire,
          authorizer: "webhook",
          webhook: pulumi.secret({ url: hook, timeoutMs: 5000 }) as never,
        }),
    );
    const urlSecret = monitor.registrations.find(
      (r) => r.type === "kubernetes:core/v1:Secret" && JSON.stringify(r.inputs).includes(hook),
    );
    expect(urlSecret?.secretPaths.length).toBeGreaterThan(0);
  });

  it("AnsibleForms (its passwords from @pulumi/random), its RTE token a secret on the wire and in its Secret, and a RemoteRte", async () => {
    await expectSameChildren(
      "entryway:index:AnsibleForms",
      "entryway",
      { namespace: "forms", rteToken: secretInput(RTE_TOKEN) },
      () => {
        new AnsibleForms("entryway", { namespace: "forms", rteToken: pulumi.secret(RTE_TOKEN) });
      },
    );
    const tokenSecret = monitor.registrations.find(
      (r) => r.type === "kubernetes:core/v1:Secret" && JSON.stringify(r.inputs).includes(RTE_TOKEN),
    );
    expect(tokenSecret?.secretPaths.length).toBeGreaterThan(0);
    const remote = { namespace: "rte", appUrl: "https://forms.example.com", existingTokenSecret: "rte-token" };
    await expectSameChildren("entryway:index:RemoteRte", "entryway", remote, () => new RemoteRte("entryway", remote));
  });

  it("RunnerSeed", async () => {
    const seed = {
      namespace: "forms",
      configMapName: "forms-seed",
      appEnv: ["RTE_TOKEN"],
      seed: {
        runners: [SIDECAR_RUNNER],
      },
    } as const;
    const state = await expectSameChildren("entryway:index:RunnerSeed", "seed", seed, () => {
      new RunnerSeed("seed", seed as never);
    });
    expect(state.content).toContain("token: ${RTE_TOKEN}");
  });

  it("Stack with the dev environment's configuration (every part on)", async () => {
    await expectSameChildren("entryway:index:Stack", "dev", devStack as unknown as Record<string, unknown>, () => {
      new Stack("dev", devStack);
    });
  });

  it("registers nothing the engine would refuse and logs no error", () => {
    expect(monitor.refusals).toEqual([]);
    expect(monitor.logs.filter((l) => l.severity >= 3)).toEqual([]);
  });

  // After the check above: this Construct fails on purpose.
  it("ExecGateway refuses an unknown or mistyped setting as a YAML or Python program passes it, every one at once, before any child", async () => {
    const before = monitor.registrations.length;
    const inputs = {
      namespace: "entryway",
      targetNamespaces: ["team-a"],
      settings: { idleTimout: 1, maxSessions: "10" },
    };
    await expect(
      construct(host, monitor, { type: "entryway:index:ExecGateway", name: "typo", inputs }),
    ).rejects.toThrow(
      /ExecGateway typo: settings must NOT have additional properties "idleTimout"\nExecGateway typo: settings\/maxSessions must be integer/,
    );
    expect(monitor.registrations.slice(before).map((r) => r.type)).not.toContain("kubernetes:core/v1:ConfigMap");
  });
});
