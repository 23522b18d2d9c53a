import { spawnSync } from "node:child_process";
import path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { MockMonitor } from "@pulumi/pulumi/runtime/mocks";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseStackConfig, Stack } from "../../components/stack";
import { REDACTED } from "../../testkit/offline/manifests";
import { childrenOf, findManifest, isSecretOutput, outputOf, render } from "../../testkit/harness/pulumi";
import { repoRoot } from "../../testkit/harness/helm";

class Demo extends pulumi.ComponentResource {
  readonly token: pulumi.Output<string>;
  constructor(name: string) {
    super("entryway:test:Demo", name, {}, {});
    const password = new random.RandomPassword(`${name}-token`, { length: 24, special: false }, { parent: this });
    new k8s.core.v1.Secret(
      `${name}-secret`,
      { metadata: { name: `${name}-keys` }, stringData: { token: password.result } },
      { parent: this },
    );
    new k8s.core.v1.ConfigMap(
      `${name}-config`,
      { metadata: { name: `${name}-config` }, data: { token: password.result } },
      { parent: this },
    );
    this.token = password.result;
    this.registerOutputs({ token: this.token });
  }
}

describe("the Pulumi test harness", () => {
  it("records type, name, parent and inputs of every resource", async () => {
    let demo: Demo | undefined;
    const { resources } = await render(() => {
      demo = new Demo("demo");
    });
    // Registration is asynchronous: compare as sets.
    expect(resources.map((r) => r.type).sort()).toEqual([
      "entryway:test:Demo",
      "kubernetes:core/v1:ConfigMap",
      "kubernetes:core/v1:Secret",
      "random:index/randomPassword:RandomPassword",
    ]);
    const component = resources.find((r) => r.type === "entryway:test:Demo")!;
    expect(component.parent).toBeUndefined();
    expect(
      childrenOf(resources, component.urn)
        .map((r) => r.name)
        .sort(),
    ).toEqual(["demo-config", "demo-secret", "demo-token"]);
    expect(resources.find((r) => r.name === "demo-token")!.inputs).toMatchObject({ length: 24, special: false });
    expect(await outputOf(demo!.token)).toMatch(/^offline-random-demo-token/);
    expect(await isSecretOutput(demo!.token)).toBe(true);
  });

  it("redacts every secret value from manifests, in Secrets and elsewhere", async () => {
    const { manifests } = await render(() => new Demo("redact"));
    expect(findManifest(manifests, "Secret", "redact-keys").stringData).toEqual({ token: REDACTED });
    expect(findManifest(manifests, "ConfigMap", "redact-config").data).toEqual({ token: REDACTED });
  });

  it("passes stack config to the program", async () => {
    const seen = await render(() => undefined, { stack: { namespace: "x" } }).then(() =>
      new pulumi.Config("entryway").requireObject<{ namespace: string }>("stack"),
    );
    expect(seen.namespace).toBe("x");
  });

  it("fails with the program's message when a check inside an apply throws, as a preview would", async () => {
    const program = () => {
      const size = pulumi.output(3).apply((n) => {
        if (n < 16) throw new Error(`token is ${n} characters, at least 16 are needed`);
        return String(n);
      });
      new k8s.core.v1.ConfigMap("checked", { metadata: { name: "checked" }, data: { size } });
    };
    await expect(render(program)).rejects.toThrow(/token is 3 characters, at least 16 are needed/);
    // The harness is usable again afterwards.
    const { manifests } = await render(() => new k8s.core.v1.ConfigMap("after", { metadata: { name: "after" } }));
    expect(manifests.map((m) => m.metadata.name)).toEqual(["after"]);
  });

  it("answers every registration of the dev stack as Pulumi's own MockMonitor does, without its protobuf answer", async () => {
    type Register = (req: unknown, callback: (err: unknown, res: RegisterAnswer | undefined) => void) => unknown;
    interface RegisterAnswer {
      getUrn(): string;
      getId(): string;
      getObject(): { toJavaScript(): unknown };
      getPropertydependenciesMap(): { entries(): Iterable<unknown> } | undefined;
      getResult(): number;
      getUnknown(): boolean;
    }
    const monitor = pulumi.runtime.getMonitor() as unknown as { registerResource: Register };
    const offlineRegister = monitor.registerResource;
    const requests: unknown[] = [];
    monitor.registerResource = (req, callback) => {
      requests.push(req);
      return offlineRegister.call(monitor, req, callback);
    };
    try {
      const dev = parse(readFileSync(path.join(repoRoot, "Pulumi.dev.yaml"), "utf8")) as {
        config: Record<string, unknown>;
      };
      await render(() => new Stack("dev", parseStackConfig(dev.config["entryway:stack"])));
    } finally {
      monitor.registerResource = offlineRegister;
    }
    const answer = (register: Register, req: unknown) =>
      new Promise((resolve, reject) =>
        register.call(monitor, req, (err, res) =>
          err || !res
            ? reject(err as Error)
            : resolve({
                urn: res.getUrn(),
                id: res.getId(),
                object: res.getObject().toJavaScript(),
                dependencies: [...(res.getPropertydependenciesMap()?.entries() ?? [])],
                result: res.getResult(),
                unknown: res.getUnknown(),
              }),
        ),
      );
    expect(requests.length).toBeGreaterThan(30);
    for (const req of requests) {
      expect(await answer(offlineRegister, req)).toEqual(
        await answer(MockMonitor.prototype.registerResource as Register, req),
      );
    }
    // The inputs come back from the offline runtime's Struct as from protobuf's own round trip,
    // key order included: Struct.prototype.toJavaScript reads the protobuf fields, built on demand.
    const { Struct } = await import("google-protobuf/google/protobuf/struct_pb");
    for (const req of requests as { getObject(): InstanceType<typeof Struct> }[]) {
      const struct = req.getObject();
      expect(JSON.stringify(struct.toJavaScript())).toBe(JSON.stringify(Struct.prototype.toJavaScript.call(struct)));
    }
    expect(() => Struct.fromJavaScript({ hook: (() => undefined) as never })).toThrow("Unexpected struct type.");
  });

  it("fails loudly when a program runs without the offline runtime", () => {
    const script = [
      'import { runProgram } from "./testkit/offline/runtime";',
      "runProgram(() => undefined).then(() => console.log('passed on nothing'), (e) => { console.error(e.message); process.exit(3); });",
    ].join("\n");
    const result = spawnSync(path.join(repoRoot, "node_modules/.bin/tsx"), ["--eval", script], {
      cwd: repoRoot,
      encoding: "utf8",
    });
    expect(result.status).toBe(3);
    expect(result.stderr).toMatch(/offline Pulumi runtime is not installed/);
  });
});
