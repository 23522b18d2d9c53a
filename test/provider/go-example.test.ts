/**
 * examples/go: the program of examples/yaml in Go, compiled here. The Go SDK is generated from
 * schema.json with Pulumi's own Go generator (scripts/realcp/pulumi-gosdkgen: `pulumi package
 * gen-sdk --language go` needs pulumi-language-go, which the Go module proxy refuses), and a copy
 * of the example, its go.mod's `replace` pointed at that SDK, must pass `go vet`: every type,
 * field, enum member, input and output the program uses is the SDK's. The Go module proxy gives
 * the SDK's dependencies (GOFLAGS=-mod=mod).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parse } from "yaml";
import { repoRoot } from "../../testkit/harness/helm";
import { describeWithRealTool } from "../../testkit/harness/realcp";

const exampleDir = path.join(repoRoot, "examples", "go");
const source = readFileSync(path.join(exampleDir, "main.go"), "utf8");
const goMod = readFileSync(path.join(exampleDir, "go.mod"), "utf8");
/** The SDK's module path and the folder examples/go/go.mod replaces it with. */
const [, sdkModule, sdkPlaceholder] = /^replace (\S+) => (\S+)$/m.exec(goMod) ?? [];

function run(command: string, args: string[], cwd: string): { status: number | null; output: string } {
  const result = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    // -trimpath: the build cache's entries then do not depend on the temporary folders, so only the
    // first run compiles the SDK and its dependencies (minutes on 2 cores), and with cgo off as in
    // scripts/realcp/go-env.sh it shares the compiled Pulumi Go SDK with the realcp builds.
    env: { ...process.env, GOFLAGS: "-mod=mod -trimpath", CGO_ENABLED: "0" },
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describeWithRealTool("pulumi-gosdkgen", "examples/go against the Go SDK generated from schema.json", (binDir) => {
  let work: string;
  let sdkDir: string;

  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "entryway-go-example-"));
    const generated = run(
      path.join(binDir, "pulumi-gosdkgen"),
      [path.join(repoRoot, "schema.json"), path.join(work, "sdk")],
      work,
    );
    expect(generated.output).toBe("");
    expect(generated.status).toBe(0);
    // The generator writes the package's Go files only; the SDK's requirements are the example's.
    sdkDir = path.join(work, "sdk", "entryway");
    writeFileSync(path.join(sdkDir, "go.mod"), `module ${sdkModule}\n\ngo 1.26\n`);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** `go vet` of a copy of examples/go with this main.go, against the generated SDK. */
  function vet(name: string, program: string): { status: number | null; output: string } {
    const dir = path.join(work, "programs", name);
    cpSync(exampleDir, dir, { recursive: true });
    writeFileSync(path.join(dir, "main.go"), program);
    writeFileSync(path.join(dir, "go.mod"), goMod.replace(`=> ${sdkPlaceholder}`, `=> ${sdkDir}`));
    return run("go", ["vet", "./..."], dir);
  }

  it("replaces the SDK's module with a folder of the project (under sdks/, where `pulumi package add` generates SDKs)", () => {
    expect(sdkModule).toBe("example.com/pulumi-entryway/sdk/go/entryway");
    expect(source).toContain(`"${sdkModule}"`);
    expect(sdkPlaceholder).toBe("./sdks/entryway");
    const project = parse(readFileSync(path.join(exampleDir, "Pulumi.yaml"), "utf8"));
    expect(project.runtime).toBe("go");
    expect(path.resolve(exampleDir, project.packages.entryway)).toBe(repoRoot);
  });

  it("deploys the components examples/yaml deploys, under the same names, with the same outputs", () => {
    const yaml = parse(readFileSync(path.join(repoRoot, "examples", "yaml", "Pulumi.yaml"), "utf8")) as {
      resources: Record<string, { type: string }>;
      outputs: Record<string, string>;
    };
    const resources = [...source.matchAll(/entryway\.New(\w+)\(ctx, "([^"]+)"/g)].map(([, type, name]) => [
      name,
      `entryway:index:${type}`,
    ]);
    expect(Object.fromEntries(resources)).toEqual(
      Object.fromEntries(Object.entries(yaml.resources).map(([name, r]) => [name, r.type])),
    );
    expect([...source.matchAll(/ctx\.Export\("(\w+)"/g)].map(([, name]) => name)).toEqual(Object.keys(yaml.outputs));
  });

  // A cold Go build cache compiles the Pulumi Go SDK's dependencies first.
  it("passes go vet", { timeout: 900_000 }, () => {
    const result = vet("example", source);
    expect(result.output).toBe("");
    expect(result.status).toBe(0);
  });

  it("is refused by go vet with a misspelt field, an unknown enum member, or a plain value for an input", () => {
    const mistakes: [string, string, RegExp][] = [
      ["TargetNamespaces:", "TargetNamespace:", /unknown field TargetNamespace in struct literal/],
      [
        "ExecGatewayExposureKindIstio",
        "ExecGatewayExposureKindIstios",
        /undefined: entryway.ExecGatewayExposureKindIstios/,
      ],
      [
        'pulumi.String("entryway")',
        '"entryway"',
        /cannot use "entryway" \(constant of type string\) as pulumi.StringInput value/,
      ],
    ];
    for (const mistake of mistakes) {
      const [right, wrong, refusal] = mistake;
      expect(source).toContain(right);
      const result = vet(`mistake-${mistakes.indexOf(mistake)}`, source.replace(right, wrong));
      expect(result.status, wrong).not.toBe(0);
      expect(result.output).toMatch(refusal);
    }
  });
});
