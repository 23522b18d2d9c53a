import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { generatedReference, REFERENCE, withGeneratedReference } from "../../scripts/generate-docs";
import { repoRoot } from "../../testkit/harness/helm";
import { brokenLinks, headingSlugs } from "./links";

const reference = generatedReference();

describe("docs/reference.md (generated from the sources)", () => {
  it("is in step with the stack config schema, the components and the chart values (npm run generate:docs)", () => {
    const document = readFileSync(REFERENCE, "utf8");
    if (!document.includes(reference)) {
      throw new Error(
        "docs/reference.md's generated reference is out of step with the sources: run `npm run generate:docs` (after `npm run generate:schema`)",
      );
    }
  });

  it("documents every component, its args, the stack config and the Helm values", () => {
    for (const heading of [
      "`ExecGateway` (`entryway:index:ExecGateway`",
      "##### `ExecGatewayArgs`",
      "`Stack` (`entryway:index:Stack`",
    ]) {
      expect(reference).toContain(heading);
    }
    expect(reference).toMatch(/\| `execGateway\.targetNamespaces` \| `string\[\]` \|/);
    expect(reference).toMatch(
      /\| `execGateway\.authorizer` \| `"kubernetes" \\\| "webhook" \\\| "oidc"` \| `"kubernetes"` \|/,
    );
    expect(reference).toMatch(/\| `url` \| `pulumi\.Output<string>` \| The public WebSocket URL/);
  });

  it("refuses a document without the markers", () => {
    expect(() => withGeneratedReference("# no markers\n")).toThrow(/markers/);
  });
});

const repoFile = (name: string) => path.join(repoRoot, name);
const linkedDocs = [
  "README.md",
  ...readdirSync(repoFile("docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  "gateway/README.md",
  "charts/entryway/README.md",
];

describe("README.md and the docs a newcomer reads", () => {
  it("README.md stays short: what Entryway is, the quick start and links (under 15,000 characters)", () => {
    const length = [...readFileSync(repoFile("README.md"), "utf8")].length;
    expect(length, "README.md: move guides into docs/").toBeLessThan(15_000);
  });

  it.each(linkedDocs)("every relative link and anchor in %s resolves", (name) => {
    expect(brokenLinks(repoFile(name))).toEqual([]);
  });

  it("finds a missing file, a missing anchor and an anchor in another file, and ignores code and external links", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "entryway-links-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(path.join(dir, "docs"));
    writeFileSync(
      path.join(dir, "docs/guide.md"),
      "# The `entryway` CLI: a guide\n\n## Step 1 (of 2)\n\n## Step 1 (of 2)\n",
    );
    writeFileSync(
      path.join(dir, "README.md"),
      [
        "# Top",
        "[ok](docs/guide.md#the-entryway-cli-a-guide) [ok](docs/guide.md#step-1-of-2-1) [ok](#top) [ok](https://example.com/x#y)",
        "[gone](docs/missing.md) [bad](docs/guide.md#step-2) `a code span",
        "across lines` [bad](#nowhere) `[code](docs/nothing.md)`",
        "```",
        "[fenced](docs/nothing.md)",
        "```",
      ].join("\n"),
    );
    expect(brokenLinks(path.join(dir, "README.md"))).toEqual([
      "docs/missing.md: docs/missing.md does not exist",
      "docs/guide.md#step-2: no heading with the anchor #step-2 in guide.md",
      "#nowhere: no heading with the anchor #nowhere in README.md",
    ]);
  });

  it("slugs headings as GitHub does", () => {
    expect([
      ...headingSlugs(
        "## Helm values (`charts/entryway`)\n## Security guarantees: the SSH path and the network\n# a_b c-d\n",
      ),
    ]).toEqual(["helm-values-chartsentryway", "security-guarantees-the-ssh-path-and-the-network", "a_b-c-d"]);
  });
});
