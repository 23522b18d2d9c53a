import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generatedReference, REFERENCE, withGeneratedReference } from "../../scripts/generate-docs";

const reference = generatedReference();

describe("docs/reference.md (generated from the sources)", () => {
  it("is in step with the stack config schema, the components and the chart values (npm run generate:docs)", () => {
    const document = readFileSync(REFERENCE, "utf8");
    if (!document.includes(reference)) {
      throw new Error("docs/reference.md's generated reference is out of step with the sources: run `npm run generate:docs` (after `npm run generate:schema`)");
    }
  });

  it("documents every component, its args, the stack config and the Helm values", () => {
    for (const heading of ["`ExecGateway` (`entryway:index:ExecGateway`", "##### `ExecGatewayArgs`", "`Stack` (`entryway:index:Stack`"]) {
      expect(reference).toContain(heading);
    }
    expect(reference).toMatch(/\| `execGateway\.targetNamespaces` \| `string\[\]` \|/);
    expect(reference).toMatch(/\| `execGateway\.authorizer` \| `"kubernetes" \\\| "webhook" \\\| "oidc"` \| `"kubernetes"` \|/);
    expect(reference).toMatch(/\| `url` \| `pulumi\.Output<string>` \| The public WebSocket URL/);
  });

  it("refuses a document without the markers", () => {
    expect(() => withGeneratedReference("# no markers\n")).toThrow(/markers/);
  });
});
