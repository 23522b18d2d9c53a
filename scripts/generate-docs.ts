/**
 * npm run generate:docs
 *
 * Writes the reference part of docs/reference.md (between the `<!-- generated:reference -->` markers)
 * from the sources, so it cannot drift from them (a test checks it is in step):
 *  - the stack configuration, from components/stack/config.schema.json (itself generated from
 *    the StackConfig interface by ts-json-schema-generator);
 *  - every component's args and outputs, from the TypeScript sources with the TypeScript
 *    compiler API (exported `...Args` interfaces and the public readonly properties of every
 *    exported ComponentResource, with their doc comments);
 *  - the Helm values, from charts/entryway/values.yaml (`# --` comments, helm-docs style, and
 *    defaults) and values.schema.json (types).
 * and the chart's own README (charts/entryway/README.md, shown by Artifact Hub and `helm show
 * readme`): Chart.yaml's description, install and test commands, and the same values table.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { isMap, isScalar, parseDocument, type Pair, type YAMLMap } from "yaml";

const root = path.resolve(__dirname, "..");
export const REFERENCE = path.join(root, "docs/reference.md");
export const CHART_README = path.join(root, "charts/entryway/README.md");
const BEGIN = "<!-- generated:reference (npm run generate:docs; do not edit by hand) -->";
const END = "<!-- /generated:reference -->";

type Schema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  $ref?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  required?: string[];
  additionalProperties?: boolean | Schema;
  definitions?: Record<string, Schema>;
};

const cell = (text: string) => text.replace(/\s+/g, " ").replace(/\|/g, "\\|").trim();
const code = (text: string) => (text ? `\`${cell(text).replace(/`/g, "'")}\`` : "");

// ----- stack configuration -----

function schemaType(schema: Schema, definitions: Record<string, Schema>): string {
  if (schema.$ref) return schemaType(definitions[schema.$ref.replace("#/definitions/", "")], definitions);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.anyOf) return schema.anyOf.map((s) => schemaType(s, definitions)).join(" | ");
  if (schema.type === "array") return `${schema.items ? schemaType(schema.items, definitions) : "unknown"}[]`;
  if (schema.type === "object" && !schema.properties) return "map";
  return Array.isArray(schema.type) ? schema.type.join(" | ") : (schema.type ?? "object");
}

function resolve(schema: Schema, definitions: Record<string, Schema>): Schema {
  return schema.$ref ? resolve(definitions[schema.$ref.replace("#/definitions/", "")], definitions) : schema;
}

function stackConfigRows(schema: Schema, definitions: Record<string, Schema>, prefix: string, rows: string[]): void {
  const required = new Set(schema.required ?? []);
  for (const [key, raw] of Object.entries(schema.properties ?? {})) {
    const property = resolve(raw, definitions);
    const name = `${prefix}${key}`;
    const description = raw.description ?? property.description ?? "";
    rows.push(
      `| ${code(name)} | ${code(schemaType(raw, definitions))} | ${required.has(key) ? "yes" : ""} | ${cell(description)} |`,
    );
    if (property.type === "object" && property.properties) stackConfigRows(property, definitions, `${name}.`, rows);
    if (property.type === "array" && property.items) {
      const item = resolve(property.items, definitions);
      if (item.properties) stackConfigRows(item, definitions, `${name}[].`, rows);
    }
  }
}

export function stackConfigTable(): string {
  const schema = JSON.parse(readFileSync(path.join(root, "components/stack/config.schema.json"), "utf8")) as Schema;
  const definitions = schema.definitions ?? {};
  const rows: string[] = [];
  stackConfigRows(resolve(schema, definitions), definitions, "", rows);
  return ["| Key | Type | Required | Description |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

// ----- component args and outputs -----

function docOf(node: ts.Node): string {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  return docs
    .map((doc) =>
      typeof doc.comment === "string" ? doc.comment : (doc.comment ?? []).map((part) => part.text).join(""),
    )
    .join(" ");
}

interface Member {
  name: string;
  type: string;
  optional: boolean;
  doc: string;
}

function membersOf(members: readonly ts.Node[], source: ts.SourceFile, onlyPublicReadonly: boolean): Member[] {
  const found: Member[] = [];
  for (const member of members) {
    if (!ts.isPropertySignature(member) && !ts.isPropertyDeclaration(member)) continue;
    if (onlyPublicReadonly) {
      const modifiers = ts.getModifiers(member as ts.PropertyDeclaration) ?? [];
      const kinds = modifiers.map((m) => m.kind);
      if (
        !kinds.includes(ts.SyntaxKind.ReadonlyKeyword) ||
        kinds.includes(ts.SyntaxKind.PrivateKeyword) ||
        kinds.includes(ts.SyntaxKind.ProtectedKeyword)
      )
        continue;
    }
    found.push({
      name: member.name.getText(source),
      type: member.type ? member.type.getText(source) : "unknown",
      optional: member.questionToken !== undefined,
      doc: docOf(member),
    });
  }
  return found;
}

function memberTable(members: Member[], withRequired: boolean): string {
  const header = withRequired
    ? ["| Arg | Type | Required | Description |", "| --- | --- | --- | --- |"]
    : ["| Output | Type | Description |", "| --- | --- | --- |"];
  const rows = members.map((m) =>
    withRequired
      ? `| ${code(m.name)} | ${code(m.type)} | ${m.optional ? "" : "yes"} | ${cell(m.doc)} |`
      : `| ${code(m.name)} | ${code(m.type)} | ${cell(m.doc)} |`,
  );
  return [...header, ...rows].join("\n");
}

export function componentsReference(): string {
  const entry = path.join(root, "components/index.ts");
  const program = ts.createProgram([entry], {
    strict: true,
    skipLibCheck: true,
    resolveJsonModule: true,
    esModuleInterop: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  const sections: { file: string; text: string }[] = [];
  for (const exported of checker.getExportsOfModule(module)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    for (const declaration of symbol.declarations ?? []) {
      const source = declaration.getSourceFile();
      const file = path.relative(root, source.fileName);
      // A part's args.ts holds the args of the component in <part>/<part>.ts, and <name>-args.ts those of the
      // component in <name>.ts (a part with two, as ssh/): their types go under that component.
      const group =
        path.basename(file) === "args.ts"
          ? `${path.dirname(file)}/${path.basename(path.dirname(file))}.ts`
          : file.replace(/-args\.ts$/, ".ts");
      if (ts.isClassDeclaration(declaration) && declaration.name) {
        const heritage =
          declaration.heritageClauses?.flatMap((h) => h.types.map((t) => t.expression.getText(source))) ?? [];
        if (!heritage.some((h) => /ComponentResource$/.test(h))) continue;
        const token = /super\(\s*"([^"]+)"/.exec(declaration.getText(source))?.[1] ?? "";
        const outputs = membersOf(declaration.members, source, true);
        sections.push({
          file,
          text: [
            `#### \`${exported.name}\` (\`${token}\`, ${file})`,
            "",
            cell(docOf(declaration)) || cell(docOf(source.statements[0] ?? declaration)),
            "",
            memberTable(outputs, false),
          ].join("\n"),
        });
      } else if (ts.isInterfaceDeclaration(declaration) && !/(^|\/)config\.ts$/.test(file)) {
        // Args and the types they use; stack config types are in the table above.
        const doc = cell(docOf(declaration));
        // Fields an interface takes from another (e.g. every workload's PodSettings) are in that one's table.
        const bases = declaration.heritageClauses?.flatMap((h) => h.types.map((t) => code(t.getText(source)))) ?? [];
        const inherited = bases.length > 0 ? [`Also every field of ${bases.join(", ")}.`] : [];
        sections.push({
          file: group,
          text: [
            `##### \`${exported.name}\``,
            ...(doc ? ["", doc] : []),
            ...inherited.flatMap((line) => ["", line]),
            "",
            memberTable(membersOf(declaration.members, source, false), true),
          ].join("\n"),
        });
      }
    }
  }
  // Group by file, component first, then the types its file exports; files without a component
  // (shared argument types) last, under their own heading.
  const order = [...new Set(sections.map((s) => s.file))];
  const isComponent = (s: { text: string }) => s.text.startsWith("#### ");
  const withComponent = order.filter((file) => sections.some((s) => s.file === file && isComponent(s)));
  const typesOnly = order.filter((file) => !withComponent.includes(file));
  const parts = withComponent.flatMap((file) => {
    const inFile = sections.filter((s) => s.file === file);
    return [...inFile.filter(isComponent), ...inFile.filter((s) => !isComponent(s))].map((s) => s.text);
  });
  if (typesOnly.length > 0) {
    parts.push(`#### Shared argument types (${typesOnly.join(", ")})`);
    parts.push(...typesOnly.flatMap((file) => sections.filter((s) => s.file === file).map((s) => s.text)));
  }
  return parts.join("\n\n");
}

// ----- Helm values -----

function helmDescription(comment: string | undefined): string {
  if (!comment) return "";
  const lines = comment.split("\n").map((l) => l.trim());
  const start = lines.findIndex((l) => l.startsWith("-- "));
  if (start === -1) return "";
  return [lines[start].slice(3), ...lines.slice(start + 1).filter((l) => l.length > 0)].join(" ");
}

function helmType(schema: Schema | undefined): string {
  if (!schema) return "";
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === "array") return `${schema.items?.type ?? "object"}[]`;
  return Array.isArray(schema.type) ? schema.type.join(" | ") : (schema.type ?? "");
}

function helmRows(map: YAMLMap, schema: Schema | undefined, prefix: string, rows: string[]): void {
  map.items.forEach((item, index) => {
    const pair = item as Pair;
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const comment =
      (pair.key as { commentBefore?: string } | null)?.commentBefore ??
      (index === 0 ? (map.commentBefore ?? undefined) : undefined);
    const description = helmDescription(comment ?? undefined);
    const childSchema = schema?.properties?.[key];
    const name = `${prefix}${key}`;
    if (isMap(pair.value) && pair.value.items.length > 0 && !description) {
      helmRows(pair.value, childSchema, `${name}.`, rows);
      return;
    }
    const value =
      pair.value && typeof (pair.value as { toJSON?: () => unknown }).toJSON === "function"
        ? (pair.value as { toJSON(): unknown }).toJSON()
        : (pair.value as unknown);
    rows.push(
      `| ${code(name)} | ${code(helmType(childSchema))} | ${code(JSON.stringify(value ?? null))} | ${cell(description || childSchema?.description || "")} |`,
    );
  });
}

export function helmValuesTable(): string {
  const doc = parseDocument(readFileSync(path.join(root, "charts/entryway/values.yaml"), "utf8"));
  const schema = JSON.parse(readFileSync(path.join(root, "charts/entryway/values.schema.json"), "utf8")) as Schema;
  const rows: string[] = [];
  helmRows(doc.contents as YAMLMap, schema, "", rows);
  return ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

// ----- docs/reference.md -----

export function generatedReference(): string {
  return [
    BEGIN,
    "",
    "### Stack configuration (`entryway:stack`)",
    "",
    "From [`components/stack/config.schema.json`](../components/stack/config.schema.json). A section's presence deploys its part.",
    "",
    stackConfigTable(),
    "",
    "### Components: args and outputs",
    "",
    "From the TypeScript sources (`components/`), as exported by `entryway`. Args typed `pulumi.Input<T>` take plain values or outputs.",
    "",
    componentsReference(),
    "",
    "### Helm values (`charts/entryway`)",
    "",
    "From [`values.yaml`](../charts/entryway/values.yaml) (defaults, `# --` comments) and [`values.schema.json`](../charts/entryway/values.schema.json) (types; unknown keys are refused).",
    "",
    helmValuesTable(),
    "",
    END,
  ].join("\n");
}

/** docs/reference.md with its generated reference replaced (the markers must exist). */
export function withGeneratedReference(document: string): string {
  const start = document.indexOf(BEGIN);
  const end = document.indexOf(END);
  if (start === -1 || end === -1 || end < start)
    throw new Error(`docs/reference.md has no "${BEGIN}" ... "${END}" markers`);
  return document.slice(0, start) + generatedReference() + document.slice(end + END.length);
}

// ----- the chart's README -----

/** charts/entryway/README.md, whole: every line comes from Chart.yaml, values.yaml and values.schema.json. */
export function chartReadme(): string {
  const chart = parseDocument(readFileSync(path.join(root, "charts/entryway/Chart.yaml"), "utf8")).toJS() as {
    name: string;
    description: string;
    version: string;
    home: string;
  };
  return [
    "<!-- generated by npm run generate:docs from Chart.yaml, values.yaml and values.schema.json; do not edit by hand -->",
    `# ${chart.name}`,
    "",
    chart.description,
    "",
    `Chart version ${chart.version}. Source, guides and the Pulumi components with the same options: ${chart.home}.`,
    "",
    "## Install and test",
    "",
    "Each part is off until its values section enables it. From a checkout of the repository:",
    "",
    "```sh",
    `helm install ${chart.name} charts/${chart.name} -n ${chart.name} --create-namespace -f my-values.yaml`,
    `helm test ${chart.name} -n ${chart.name}`,
    "```",
    "",
    "`helm test` runs one pod per enabled part: the exec gateway answers `/readyz`, AnsibleForms answers `/api/v2/ready`, the CONNECT port answers 404 to an undeclared target.",
    "",
    "## Values",
    "",
    "From [`values.yaml`](values.yaml) (defaults, `# --` comments) and [`values.schema.json`](values.schema.json) (types; unknown keys are refused).",
    "",
    helmValuesTable(),
    "",
  ].join("\n");
}

if (require.main === module) {
  writeFileSync(REFERENCE, withGeneratedReference(readFileSync(REFERENCE, "utf8")));
  writeFileSync(CHART_README, chartReadme());
  console.log(
    `wrote the generated reference in ${path.relative(process.cwd(), REFERENCE)} and ${path.relative(process.cwd(), CHART_README)}`,
  );
}
