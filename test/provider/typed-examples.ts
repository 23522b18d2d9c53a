/**
 * Reads the C# and Java examples (examples/csharp/Program.cs, examples/java/.../App.java) into the
 * shape of a Pulumi YAML program, `{ resources: { <variable>: { type, properties } }, outputs }`,
 * so that checkYamlProgram checks them against schema.json as it checks examples/yaml: every
 * component a class of the package, every property one of its inputs (C#: PascalCase, Java:
 * camelCase builder methods), every enum member one of the enum's (its value then checked), every
 * nested input class the SDK's name for the property's type (`<Type>Args`), and every
 * `component.Output` read an output. Only the syntax the examples use is understood: anything else
 * is an error, never skipped. Neither toolchain's SDK can be generated here (see docs/languages.md).
 */
import type { PackageSchema } from "../../testkit/harness/package-schema";

type Token = { kind: "string" | "word" | "punct" | "number"; text: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const text = source.replace(/\/\/[^\n]*|\/\*[^]*?\*\//g, " ");
  // A word may start with "." (Java's builder calls) and holds dots (qualified names).
  const pattern = /\s+|"((?:[^"\\]|\\.)*)"|(\.?[A-Za-z_][A-Za-z0-9_.]*)|(\d+(?:\.\d+)?)|(=>|->|[{}()[\];,=!<>?:])/y;
  while (pattern.lastIndex < text.length) {
    const from = pattern.lastIndex;
    const match = pattern.exec(text);
    if (!match) throw new Error(`cannot read the source at: ${text.slice(from, from + 40)}`);
    if (match[1] !== undefined) tokens.push({ kind: "string", text: match[1] });
    else if (match[2] !== undefined) tokens.push({ kind: "word", text: match[2] });
    else if (match[3] !== undefined) tokens.push({ kind: "number", text: match[3] });
    else if (match[4] !== undefined) tokens.push({ kind: "punct", text: match[4] });
  }
  return tokens;
}

export interface TypedProgram {
  resources: Record<string, { type: string; properties: Record<string, unknown> }>;
  outputs: Record<string, unknown>;
  /** Problems the reading found: a nested class or enum that is not the schema's. */
  problems: string[];
}

const camel = (name: string) => name[0].toLowerCase() + name.slice(1);

/** The schema type a property of `owner` (a resource or type token) refers to, if any. */
function propertyType(schema: PackageSchema, owner: string, property: string): string | undefined {
  const spec = schema.resources?.[owner]?.inputProperties?.[property] ?? schema.types?.[owner]?.properties?.[property];
  const ref = (spec?.$ref ?? spec?.items?.$ref) as string | undefined;
  return ref?.replace(/^#\/types\//, "");
}

class Reader {
  private at = 0;
  readonly problems: string[] = [];
  constructor(
    private readonly tokens: Token[],
    private readonly schema: PackageSchema,
    private readonly language: "csharp" | "java",
  ) {}
  peek(offset = 0): Token | undefined {
    return this.tokens[this.at + offset];
  }
  next(): Token {
    const token = this.tokens[this.at++];
    if (!token) throw new Error("unexpected end of the source");
    return token;
  }
  expect(text: string): void {
    const token = this.next();
    if (token.text !== text) throw new Error(`expected "${text}", found "${token.text}"`);
  }
  done(): boolean {
    return this.at >= this.tokens.length;
  }
  /** The SDK's class name for a schema type (the last part of the token), with the input suffix. */
  private typeName(token: string): string {
    return token.split(":").pop()!;
  }
  private enumValue(word: string, expected: string | undefined): unknown {
    const [typeName, member] = word.split(".").slice(-2);
    const token = `${this.schema.name}:index:${typeName}`;
    const type = this.schema.types?.[token];
    if (!type?.enum) {
      this.problems.push(`${word}: ${typeName} is not an enum of the schema`);
      return undefined;
    }
    if (expected !== undefined && expected !== token) this.problems.push(`${word}: the property's type is ${expected}`);
    const found = (type.enum as { name: string; value: unknown }[]).find((e) => e.name === member);
    if (!found) this.problems.push(`${word}: ${typeName} has no member ${member}`);
    return found?.value;
  }
  /** An input object: the class must be the SDK's `<Type>Args` of the property's type. */
  private checkInputClass(className: string, expected: string | undefined): string | undefined {
    const name = className.split(".").pop()!;
    if (expected === undefined) {
      this.problems.push(`${className}: the property takes no object`);
      return undefined;
    }
    if (name !== `${this.typeName(expected)}Args`)
      this.problems.push(`${className}: the property's type is ${this.typeName(expected)}Args`);
    return expected;
  }
  /** A reference to another component's output: `${variable.output}`, its rest of expression skipped. */
  private reference(word: string): string {
    const [variable, property] = word.split(".");
    // Java: connect.registration() then maybe .applyValue(...): skip the call parentheses.
    this.skipCalls();
    return `\${${variable}.${this.language === "csharp" ? camel(property) : property}}`;
  }
  private skipCalls(): void {
    for (;;) {
      if (this.peek()?.text === "(") this.skipBalanced("(", ")");
      else if (this.peek()?.text === "!") this.next();
      else if (this.peek()?.kind === "word" && this.peek()!.text.startsWith(".")) this.next();
      else return;
    }
  }
  skipBalanced(open: string, close: string): void {
    this.expect(open);
    for (let depth = 1; depth > 0;) {
      const t = this.next().text;
      if (t === open) depth++;
      else if (t === close) depth--;
    }
  }
  /** A value of a property whose schema type token (for objects and enums) is `expected`. */
  value(expected: string | undefined): unknown {
    const token = this.next();
    if (token.kind === "string") return token.text;
    if (token.kind === "number") return Number(token.text);
    if (token.text === "true" || token.text === "false") return token.text === "true";
    if (token.text === "{") return this.csharpList(expected);
    if (token.text === "new") {
      const className = this.next().text;
      if (this.language === "csharp") {
        const type = this.checkInputClass(className, expected);
        return this.csharpInitializer(type);
      }
      throw new Error(`Java: new ${className} as a value`);
    }
    if (token.kind === "word" && token.text.endsWith(".builder")) {
      const type = this.checkInputClass(token.text.replace(/\.builder$/, ""), expected);
      return this.javaBuilder(type);
    }
    if (token.kind === "word" && /^[A-Z]/.test(token.text) && token.text.includes("."))
      return this.enumValue(token.text, expected);
    if (token.kind === "word" && /^[a-z]/.test(token.text) && token.text.includes("."))
      return this.reference(token.text);
    throw new Error(`cannot read the value "${token.text}"`);
  }
  private csharpList(expected: string | undefined): unknown[] {
    const items: unknown[] = [];
    while (this.peek()?.text !== "}") {
      items.push(this.value(expected));
      if (this.peek()?.text === ",") this.next();
    }
    this.expect("}");
    return items;
  }
  /** `{ Name = value, ... }` after `new Class`, for the schema owner token `owner`. */
  csharpInitializer(owner: string | undefined): Record<string, unknown> {
    this.expect("{");
    const properties: Record<string, unknown> = {};
    while (this.peek()?.text !== "}") {
      const name = camel(this.next().text);
      this.expect("=");
      properties[name] = this.value(owner && propertyType(this.schema, owner, name));
      if (this.peek()?.text === ",") this.next();
    }
    this.expect("}");
    return properties;
  }
  /** `(). name(value...) ... .build()` after `Class.builder`, for the schema owner token `owner`. */
  javaBuilder(owner: string | undefined): Record<string, unknown> {
    this.expect("(");
    this.expect(")");
    const properties: Record<string, unknown> = {};
    for (;;) {
      const method = this.next().text.replace(/^\./, "");
      this.expect("(");
      if (method === "build") {
        this.expect(")");
        return properties;
      }
      const type = owner && propertyType(this.schema, owner, method);
      const values: unknown[] = [];
      while (this.peek()?.text !== ")") {
        values.push(this.value(type));
        if (this.peek()?.text === ",") this.next();
      }
      this.expect(")");
      const spec =
        owner &&
        (this.schema.resources?.[owner]?.inputProperties?.[method] ?? this.schema.types?.[owner]?.properties?.[method]);
      // A list's builder method takes its items as arguments.
      properties[method] =
        spec?.type === "array" && !(values.length === 1 && Array.isArray(values[0])) ? values : values[0];
    }
  }
}

/** The examples' program from C# or Java source. */
export function readTypedProgram(source: string, language: "csharp" | "java", schema: PackageSchema): TypedProgram {
  const reader = new Reader(tokenize(source), schema, language);
  const program: TypedProgram = { resources: {}, outputs: {}, problems: reader.problems };
  let anonymous = 0;
  let variable: string | undefined;
  while (!reader.done()) {
    const token = reader.next();
    if (token.text === "var" && reader.peek(1)?.text === "=" && reader.peek(2)?.text === "new") {
      variable = reader.next().text;
      reader.expect("=");
      continue;
    }
    if (token.text === "new" && reader.peek(1)?.text === "(" && reader.peek(2)?.kind === "string") {
      const className = reader.next().text.split(".").pop()!;
      const type = `${schema.name}:index:${className}`;
      if (!schema.resources?.[type]) {
        variable = undefined;
        continue; // not one of the package's components (a Dictionary, say)
      }
      reader.expect("(");
      reader.next(); // the resource's name
      reader.expect(",");
      const args = reader.next().text;
      let properties: Record<string, unknown>;
      if (language === "csharp") {
        if (args !== "new") throw new Error(`${className}: the arguments are not a new ${className}Args`);
        const argsClass = reader.next().text.split(".").pop();
        if (argsClass !== `${className}Args`)
          program.problems.push(`${className}: its arguments class is ${className}Args, not ${argsClass}`);
        properties = reader.csharpInitializer(type);
      } else {
        if (args !== `${className}Args.builder`)
          throw new Error(`${className}: the arguments are not ${className}Args.builder()`);
        properties = reader.javaBuilder(type);
      }
      program.resources[variable ?? `anonymous${anonymous++}`] = { type, properties };
      variable = undefined;
      continue;
    }
    // Outputs: C# `["name"] = variable.Output`, Java `ctx.export("name", variable.output())`.
    if (
      language === "csharp" &&
      token.text === "[" &&
      reader.peek()?.kind === "string" &&
      reader.peek(1)?.text === "]"
    ) {
      const name = reader.next().text;
      reader.expect("]");
      reader.expect("=");
      program.outputs[name] = reader.value(undefined);
    }
    if (language === "java" && token.text === "ctx.export") {
      reader.expect("(");
      const name = reader.next().text;
      reader.expect(",");
      program.outputs[name] = reader.value(undefined);
    }
    variable = undefined;
  }
  return program;
}
