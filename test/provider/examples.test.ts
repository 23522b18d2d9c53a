/**
 * examples/: the Pulumi YAML and Python programs a platform repo writes with the Entryway package,
 * checked against the package's checked-in schema.json (what `pulumi package add` generates their
 * SDKs from; there is no Pulumi CLI here to generate them). YAML: every resource of the package
 * binds (type, required inputs, property names, types and enum values) and every
 * `${resource.output}` names an output. Python: the same for the generated SDK's classes, keyword
 * names (snake_case) and literal values, read with Python's own parser.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
/* eslint-disable @typescript-eslint/no-explicit-any */
import { describe, expect, it, onTestFinished } from "vitest";
import { parse } from "yaml";
import { repoRoot } from "../../testkit/harness/helm";
import { readTypedProgram } from "./typed-examples";
import {
  checkPythonProgram,
  checkYamlProgram,
  type PackageSchema,
  type PythonComponentCall,
} from "../../testkit/harness/package-schema";

const schema = JSON.parse(readFileSync(path.join(repoRoot, "schema.json"), "utf8")) as PackageSchema;
const yamlProgramFile = path.join(repoRoot, "examples", "yaml", "Pulumi.yaml");
const pythonProgramFile = path.join(repoRoot, "examples", "python", "__main__.py");

function yamlProgram(): Record<string, any> {
  return parse(readFileSync(yamlProgramFile, "utf8"));
}

function pythonUse(file: string): { calls: PythonComponentCall[]; attributeReads: [string, string][] } {
  const result = spawnSync(
    "python3",
    [path.join(repoRoot, "test", "provider", "python-calls.py"), file, "pulumi_entryway"],
    { encoding: "utf8" },
  );
  if (result.error) throw new Error(`python3 is needed to read examples/python: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`python-calls.py failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

function pythonProblems(source: string): string[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-python-example-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "__main__.py");
  writeFileSync(file, source);
  const use = pythonUse(file);
  return checkPythonProgram(schema, use.calls, use.attributeReads);
}

describe.each(["yaml", "python"])("examples/%s/Pulumi.yaml", (language) => {
  it("adds this package from its folder (the `packages:` entry `pulumi package add` writes), which has a PulumiPlugin.yaml", () => {
    const project = parse(readFileSync(path.join(repoRoot, "examples", language, "Pulumi.yaml"), "utf8"));
    expect(project.runtime).toBe(language);
    expect(path.resolve(repoRoot, "examples", language, project.packages.entryway)).toBe(repoRoot);
    expect(existsSync(path.join(repoRoot, "PulumiPlugin.yaml"))).toBe(true);
  });
});

describe("the YAML example against schema.json", () => {
  it("deploys an SSH workspace (behind its CONNECT gateway), the exec gateway, and AnsibleForms with a remote RTE", () => {
    expect(
      Object.values(yamlProgram().resources)
        .map((r: any) => r.type)
        .sort(),
    ).toEqual([
      "entryway:index:AnsibleForms",
      "entryway:index:ConnectGateway",
      "entryway:index:ExecGateway",
      "entryway:index:RemoteRte",
      "entryway:index:SshWorkspace",
    ]);
  });

  it("binds: types, required inputs, property names, types and enum values, outputs", () => {
    expect(checkYamlProgram(schema, yamlProgram())).toEqual([]);
  });

  it("is refused with a misspelt property, a missing required input, an unknown enum value or output", () => {
    const program = yamlProgram();
    const exec = program.resources.exec.properties;
    exec.targetNamespace = exec.targetNamespaces;
    delete exec.targetNamespaces;
    delete program.resources.alice.properties.namespace;
    exec.authorizer = "ldap";
    program.outputs.execUrl = "${exec.ulr}";
    const problems = checkYamlProgram(schema, program);
    expect(problems).toContainEqual(
      expect.stringMatching(/^resources\.exec: entryway:index:ExecGateway: unknown property "targetNamespace"/),
    );
    expect(problems).toContain(
      'resources.alice: entryway:index:SshWorkspace: required property "namespace" is missing',
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/^resources\.exec: entryway:index:ExecGateway\.authorizer: "ldap" is not one of/),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/^outputs: exec \(entryway:index:ExecGateway\) has no output "ulr"/),
    );
  });
});

describe("the Python example against schema.json's names", () => {
  const source = readFileSync(pythonProgramFile, "utf8");

  it("deploys an SSH workspace (behind its CONNECT gateway), the exec gateway, and AnsibleForms with a remote RTE", () => {
    expect(
      pythonUse(pythonProgramFile)
        .calls.map((c) => c.className)
        .sort(),
    ).toEqual(["AnsibleForms", "ConnectGateway", "ExecGateway", "RemoteRte", "SshWorkspace"]);
  });

  it("uses only the generated SDK's classes, keywords and outputs, with literals of the right types", () => {
    expect(pythonProblems(source)).toEqual([]);
  });

  it("is refused with a misspelt keyword, an unknown class or output", () => {
    const problems = pythonProblems(
      source
        .replace("target_namespaces=", "target_namespace=")
        .replace("entryway.ConnectGateway(", "entryway.ConnectGateways(")
        .replace("alice.ssh_config", "alice.ssh_conf"),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/entryway:index:ExecGateway: unknown property "targetNamespace"/),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/entryway:index:ConnectGateways: not a resource of package entryway/),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/alice \(entryway:index:SshWorkspace\) has no output "sshConf"/),
    );
  });
});

/**
 * examples/csharp and examples/java: the same program with the generated C# and Java SDKs, read
 * into the YAML program's shape (test/provider/typed-examples.ts) and checked as it is. Neither is
 * compiled here: there is no .NET SDK on this machine, and the Java SDK cannot be generated
 * (pulumi-java's code generator is not on the Go module proxy; docs/languages.md).
 */
describe.each([
  ["csharp", "dotnet", "Program.cs"],
  ["java", "java", "src/main/java/myproject/App.java"],
] as const)("examples/%s", (language, runtime, file) => {
  const source = readFileSync(path.join(repoRoot, "examples", language, file), "utf8");
  const problems = (text: string) => {
    const program = readTypedProgram(text, language, schema);
    return [...program.problems, ...checkYamlProgram(schema, program)];
  };

  it("is a project of its language that adds this package from its folder", () => {
    const project = parse(readFileSync(path.join(repoRoot, "examples", language, "Pulumi.yaml"), "utf8"));
    expect(project.runtime).toBe(runtime);
    expect(path.resolve(repoRoot, "examples", language, project.packages.entryway)).toBe(repoRoot);
  });

  it("deploys the components examples/yaml deploys, with the same properties and outputs", () => {
    const program = readTypedProgram(source, language, schema);
    const yaml = yamlProgram();
    expect(Object.fromEntries(Object.values(program.resources).map((r) => [r.type, r.properties]))).toEqual(
      Object.fromEntries(Object.values(yaml.resources).map((r: any) => [r.type, r.properties])),
    );
    expect(program.outputs).toEqual(yaml.outputs);
  });

  it("uses only the SDK's classes, properties, input classes, enum members and outputs", () => {
    expect(problems(source)).toEqual([]);
  });

  it("is refused with a misspelt property, enum member, input class or output", () => {
    const [property, member, inputClass, output] =
      language === "csharp"
        ? ["TargetNamespaces =", "ConnectGatewayServiceType.LoadBalancer", "SshWorkspaceStorageArgs", "alice.SshConfig"]
        : [
            ".targetNamespaces(",
            "ConnectGatewayServiceType.LoadBalancer",
            "SshWorkspaceStorageArgs.builder",
            "alice.sshConfig()",
          ];
    const found = problems(
      source
        .replace(
          property,
          property.replace("targetNamespaces", "targetNamespace").replace("TargetNamespaces", "TargetNamespace"),
        )
        .replace(member, member.replace("LoadBalancer", "Loadbalancer"))
        .replace(inputClass, inputClass.replace("SshWorkspaceStorageArgs", "SshWorkspaceStorage"))
        .replace(
          output,
          output.replace(/sshConfig|SshConfig/, (m) => `${m}s`),
        ),
    );
    expect(found).toContainEqual(
      expect.stringMatching(/entryway:index:ExecGateway: unknown property "targetNamespace"/),
    );
    expect(found).toContainEqual(expect.stringMatching(/ConnectGatewayServiceType has no member Loadbalancer/));
    expect(found).toContainEqual(
      expect.stringMatching(/SshWorkspaceStorage: the property's type is SshWorkspaceStorageArgs/),
    );
    expect(found).toContainEqual(
      expect.stringMatching(/alice \(entryway:index:SshWorkspace\) has no output "sshConfigs"/),
    );
  });
});

/**
 * The generated SDKs' class docs come from the schema's resource descriptions, which Pulumi's
 * analyzer takes from each component class's doc comment (the one source: docs/reference.md shows
 * the same text). Types get none: @pulumi/pulumi 3.276.0's schema generator
 * (provider/experimental/schema.js, generateSchema) writes a type's kind and properties only,
 * although its analyzer reads the interfaces' doc comments; their properties keep theirs.
 */
describe("component descriptions", () => {
  const reference = readFileSync(path.join(repoRoot, "docs/reference.md"), "utf8");

  it.each(Object.keys(schema.resources))(
    "%s has a description for users, whole, in schema.json and docs/reference.md",
    (token) => {
      const description: string = schema.resources[token].description ?? "";
      expect(description.length).toBeGreaterThan(80);
      expect(description).toMatch(/\.$/);
      // A word starting with @ would be read as a JSDoc tag and cut the comment there.
      expect(description).not.toMatch(/constructor|private method|@/);
      const name = token.split(":").pop()!;
      const heading = reference.indexOf(`#### \`${name}\` (\`${token}\``);
      expect(heading).toBeGreaterThan(-1);
      const paragraph = reference.slice(heading).split("\n\n")[1];
      expect(paragraph).toBe(description.replace(/\s*\n\s*/g, " "));
    },
  );
});
