/**
 * The provider-host harness on a package of its own (test/fixtures/component-package): the
 * component provider host answers GetSchema and Construct over gRPC, Construct's children are
 * those the TypeScript constructor makes under the offline runtime, and the resource-monitor
 * stand-in refuses what the engine refuses (an unknown parent, a duplicate URN).
 */
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../testkit/harness/helm";
import { render } from "../../testkit/harness/pulumi";
import {
  construct,
  getSchema,
  secretInput,
  startComponentProviderHost,
  startResourceMonitor,
  type ComponentProviderHost,
  type ResourceMonitor,
} from "../../testkit/harness/provider-host";
import { Notice } from "../fixtures/component-package";
import { checkResource } from "../../testkit/harness/package-schema";

const packageDir = path.join(repoRoot, "test", "fixtures", "component-package");
let monitor: ResourceMonitor;
let host: ComponentProviderHost;

beforeAll(async () => {
  monitor = await startResourceMonitor();
  host = await startComponentProviderHost(packageDir, monitor.address);
}, 200_000);

afterAll(async () => {
  host?.stop();
  await monitor?.close();
});

describe("a component package served by Pulumi's component provider host", () => {
  it("GetSchema returns the schema Pulumi's analyzer infers: inputs with types, enums, descriptions", async () => {
    const schema = await getSchema(host);
    expect(schema.name).toBe("hostfixture");
    const notice = schema.resources["hostfixture:index:Notice"];
    expect(notice.isComponent).toBe(true);
    expect(notice.requiredInputs).toEqual(["namespace"]);
    expect(notice.inputProperties.namespace).toEqual({
      type: "string",
      description: "The namespace of the ConfigMap.",
    });
    expect(notice.inputProperties.greeting.$ref).toBe("#/types/hostfixture:index:Greeting");
    expect(schema.types["hostfixture:index:Greeting"].enum.map((e: { value: string }) => e.value).sort()).toEqual([
      "goodbye",
      "hello",
    ]);
    expect(notice.properties.configMapName.type).toBe("string");
  });

  it("Construct registers the same children as the TypeScript constructor under the offline runtime", async () => {
    const constructed = await construct(host, monitor, {
      type: "hostfixture:index:Notice",
      name: "hello",
      inputs: { namespace: "team-a", greeting: "goodbye", token: secretInput("s3cret") },
    });
    const offline = await render(
      () => new Notice("hello", { namespace: "team-a", greeting: "goodbye", token: pulumi.secret("s3cret") }),
    );
    const children = (resources: typeof offline.resources) =>
      resources.filter((r) => r.type !== "hostfixture:index:Notice").sort((a, b) => a.urn.localeCompare(b.urn));
    expect(constructed.urn).toBe("urn:pulumi:test::entryway::hostfixture:index:Notice::hello");
    expect(children(constructed.registrations).map((r) => r.type)).toEqual([
      "kubernetes:core/v1:ConfigMap",
      "kubernetes:core/v1:Secret",
    ]);
    expect(children(constructed.registrations)).toEqual(children(offline.resources));
    expect(children(constructed.registrations)[1].secretPaths).toEqual(["stringData"]);
    expect(constructed.state).toEqual({ configMapName: "hello-greeting" });
  });

  it("the monitor stand-in refuses a registration under an unknown parent", async () => {
    const parent = "urn:pulumi:test::entryway::pulumi:pulumi:Stack::nowhere";
    await expect(
      construct(host, monitor, {
        type: "hostfixture:index:Notice",
        name: "orphan",
        inputs: { namespace: "team-a" },
        parent,
      }),
    ).rejects.toThrow();
    expect(monitor.refusals).toContain(`could not find parent resource ${parent}`);
  });

  it("the monitor stand-in refuses two registrations of one URN", async () => {
    await expect(
      construct(host, monitor, { type: "hostfixture:index:Twins", name: "pair", inputs: { namespace: "team-a" } }),
    ).rejects.toThrow();
    expect(monitor.refusals).toContain(
      "Duplicate resource URN 'urn:pulumi:test::entryway::hostfixture:index:Twins$kubernetes:core/v1:ConfigMap::twin'; try giving it a unique name",
    );
  });

  it("the schema check accepts what the inferred schema allows and names what it does not", async () => {
    const schema = await getSchema(host);
    expect(
      checkResource(schema, "hostfixture:index:Notice", {
        namespace: "team-a",
        greeting: "hello",
        token: "${secret.value}",
      }),
    ).toEqual([]);
    expect(checkResource(schema, "hostfixture:index:Notice", { namespace: "team-a", greting: "hello" })).toEqual([
      'hostfixture:index:Notice: unknown property "greting" (known: greeting, namespace, token)',
    ]);
    expect(checkResource(schema, "hostfixture:index:Notice", { greeting: "hi" })).toEqual([
      'hostfixture:index:Notice: required property "namespace" is missing',
      'hostfixture:index:Notice.greeting: "hi" is not one of ["hello","goodbye"]',
    ]);
    expect(checkResource(schema, "hostfixture:index:Notice", { namespace: 7 })).toEqual([
      "hostfixture:index:Notice.namespace: expected a string, got 7",
    ]);
    expect(checkResource(schema, "hostfixture:index:Notic", {})[0]).toMatch(
      /^hostfixture:index:Notic: not a resource of package hostfixture/,
    );
  });
});
