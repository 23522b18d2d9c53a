/**
 * The package schema Pulumi infers from the components (PulumiPlugin.yaml: `pulumi package add`
 * on this repository). Runs Pulumi's own analyzer (@pulumi/pulumi/provider/experimental, through
 * the ComponentProvider the nodejs plugin host serves) and checks that it takes all seven
 * components, with their inputs' types, the doc comments as descriptions, the `as const` unions as
 * enums whose values are the TypeScript ones, and that the checked-in schema.json is what it infers.
 *
 * Secrets: the analyzer has no way to mark a property secret (pulumi/pulumi
 * sdk/nodejs/provider/experimental/analyzer.ts and schema.ts write no `secret` field), so a secret
 * travels as a secret value (inputs passed as Pulumi secrets, outputs made with pulumi.secret) and
 * the schema says so in the property's description; this checks those descriptions.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import * as entryway from "../../components";
import { generatePackageSchema, PACKAGE_SCHEMA_FILE } from "../../scripts/generate-package-schema";
import { COMPONENTS } from "./components";

interface Property {
  type?: string;
  $ref?: string;
  items?: Property;
  additionalProperties?: Property;
  description?: string;
  plain?: boolean;
}
interface Resource {
  isComponent: boolean;
  inputProperties: Record<string, Property>;
  requiredInputs: string[];
  properties: Record<string, Property>;
}
interface PackageSchema {
  name: string;
  resources: Record<string, Resource>;
  types: Record<
    string,
    { type: string; enum?: { name: string; value: string }[]; properties?: Record<string, Property> }
  >;
}

let inferred = "";
let schema: PackageSchema;
const resource = (name: string) => schema.resources[`entryway:index:${name}`];
const typeRef = (name: string) => `#/types/entryway:index:${name}`;

beforeAll(async () => {
  inferred = await generatePackageSchema();
  schema = JSON.parse(inferred) as PackageSchema;
}, 120_000);

describe("the package schema Pulumi's analyzer infers", () => {
  it("is the checked-in schema.json (npm run generate:package-schema)", () => {
    expect(inferred, "schema.json is stale: run npm run generate:package-schema").toBe(
      readFileSync(PACKAGE_SCHEMA_FILE, "utf8"),
    );
  });

  it("has all seven components, and nothing else", () => {
    expect(schema.name).toBe("entryway");
    expect(Object.keys(schema.resources).sort()).toEqual(COMPONENTS.map((name) => `entryway:index:${name}`).sort());
    for (const name of COMPONENTS) expect(resource(name).isComponent, name).toBe(true);
  });

  it("types the inputs, plain where they shape objects and Inputs where values may come later", () => {
    const exec = resource("ExecGateway");
    expect(exec.inputProperties.namespace).toMatchObject({ type: "string" });
    expect(exec.inputProperties.namespace.plain).toBeUndefined();
    expect(exec.inputProperties.targetNamespaces).toMatchObject({
      type: "array",
      items: { type: "string" },
      plain: true,
    });
    expect(exec.inputProperties.authorizer).toMatchObject({ $ref: typeRef("ExecGatewayAuthorizer") });
    expect(exec.requiredInputs).toEqual(["namespace"]);
    expect(resource("SshWorkspace").inputProperties.gateway).toMatchObject({
      $ref: typeRef("ConnectGatewayRegistration"),
    });
    expect(schema.types["entryway:index:ConnectGatewayRegistration"].properties).toMatchObject({
      gatewayName: { type: "string" },
      namespace: { type: "string" },
      port: { type: "number" },
      routeConfigurationName: { type: "string" },
      tls: { type: "boolean" },
      selector: { type: "object", additionalProperties: { type: "string" } },
      dns: { $ref: typeRef("InClusterPeer") },
    });
    expect(resource("Stack").requiredInputs).toEqual(["namespace"]);
    expect(resource("Stack").inputProperties.workspaces).toMatchObject({
      type: "array",
      items: { $ref: typeRef("SshWorkspaceConfig") },
    });
    expect(resource("RunnerSeed").inputProperties.seed).toMatchObject({ $ref: typeRef("SeedSpec") });
    expect(schema.types["entryway:index:SeedRunner"].properties).toMatchObject({
      type: { $ref: typeRef("RunnerType") },
      mode: { $ref: typeRef("RteRunnerMode") },
    });
    expect(resource("ConnectGateway").properties.registration).toMatchObject({
      $ref: typeRef("ConnectGatewayRegistration"),
    });
    expect(resource("AnsibleForms").properties.rteMode).toMatchObject({ $ref: typeRef("AnsibleFormsRteMode") });
  });

  it("describes the inputs and outputs with their doc comments", () => {
    expect(resource("ExecGateway").inputProperties.targetNamespaces.description).toMatch(
      /^The namespaces the gateway may enter: a Role and RoleBinding in each/,
    );
    expect(resource("ConnectGateway").inputProperties.port.description).toBe(
      "The CONNECT port (default 2222). 80, 443 and Istio's own ports are refused.",
    );
    expect(resource("SshWorkspace").properties.sshConfig.description).toBe(
      "The ~/.ssh/config block (alias: sshAlias, default the workspace's object name).",
    );
    // A JSDoc tag is for the config schema, not part of the description.
    expect(resource("Stack").inputProperties.name.description).toBe(
      'The base of every object name, as the Helm release name is for the chart (default "entryway").',
    );
    const undescribed = Object.entries(schema.resources).flatMap(([type, r]) =>
      [...Object.entries(r.inputProperties), ...Object.entries(r.properties)]
        .filter(([, p]) => !p.description)
        .map(([key]) => `${type}.${key}`),
    );
    expect(undescribed).toEqual([]);
  });

  it("says which inputs take secrets and which outputs are secrets", () => {
    expect(resource("AnsibleForms").inputProperties.rteToken.description).toMatch(/Pass a secret/);
    expect(resource("RemoteRte").inputProperties.token.description).toMatch(/pass a secret/);
    expect(schema.types["entryway:index:ExecGatewayWebhookArgs"].properties!.url.description).toMatch(
      /pass a Pulumi secret/,
    );
    expect(resource("AnsibleForms").properties.adminPassword.description).toMatch(/\(secret\)/);
    expect(resource("AnsibleForms").properties.rteToken.description).toMatch(/\(secret\)/);
    expect(resource("Stack").properties.ansibleFormsAdminPassword.description).toMatch(/\(a secret\)/);
    expect(resource("Stack").properties.ansibleFormsRteToken.description).toMatch(/\(a secret\)/);
  });

  it("makes every string union an enum with the TypeScript values", () => {
    const enums = Object.entries(schema.types).filter(([, t]) => t.enum);
    // Every `as const` union the package exports.
    expect(enums.length).toBe(14);
    for (const [token, type] of enums) {
      const name = token.split(":")[2];
      const exported = (entryway as unknown as Record<string, Record<string, string> | undefined>)[name];
      expect(exported, `${name} is exported from the package`).toBeDefined();
      expect(type.type).toBe("string");
      expect(Object.fromEntries(type.enum!.map((member) => [member.name, member.value])), name).toEqual(exported);
    }
    expect(schema.types["entryway:index:ExecGatewayAuthorizer"].enum!.map((m) => m.value)).toEqual([
      "kubernetes",
      "webhook",
      "oidc",
    ]);
  });
});
