/**
 * The settings' string unions are `as const` objects with a type of the same name: TypeScript
 * takes the plain strings, and Pulumi's component analyzer reads them as enums (pulumi/pulumi
 * sdk/nodejs/provider/experimental/analyzer.ts, analyzeType and extractEnumMembers), which it
 * takes in place of a bare string union. Each type is written `export type X = ValueOf<typeof X>`;
 * the analyzer still names the enum X, as it finds the name on the property's type reference
 * (test/package/component-schema.test.ts checks every enum).
 */

/**
 * The values of an object, as a union: `ValueOf<typeof X>` is `(typeof X)[keyof typeof X]`.
 * Exported by an export list, not by an `export` modifier: ts-json-schema-generator makes a
 * definition only of a declaration that carries the modifier (ExposeNodeParser.isExportNode), so
 * each enum keeps its own definition, inlined; and unlike the internal tag, this keeps it in the
 * published declarations, which stripInternal would otherwise leave referring to a missing type.
 */
type ValueOf<T> = T[keyof T];
export type { ValueOf };
