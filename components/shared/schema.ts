/** Ajv's errors as the components' problem lines (the stack config's check, the exec gateway's settings). */
import type { ErrorObject } from "ajv";

/**
 * What a JSON Schema validation (Ajv, allErrors) found, one line per error: where (`prefix` and the
 * path inside the value; the value itself when both are empty), what, and an unknown key by name. @internal
 */
export function schemaProblems(errors: readonly ErrorObject[] | null | undefined, prefix = ""): string[] {
  return (errors ?? []).map((e) => {
    const where = prefix + e.instancePath || "(top level)";
    const extra =
      e.keyword === "additionalProperties"
        ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"`
        : "";
    return `${where} ${e.message}${extra}`;
  });
}
