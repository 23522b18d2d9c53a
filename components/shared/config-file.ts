/**
 * Config files both front ends mount from a ConfigMap: the same bytes from Pulumi as from Helm, and
 * a checksum on the pod template so a change rolls the pods.
 */
import { createHash } from "node:crypto";

/** What Go's encoding/json escapes in strings so that JSON is safe inside HTML <script>. */
const HTML_UNSAFE: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/** The value with every object's keys in sorted order (arrays keep theirs). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}

/**
 * A document as Helm's `toJson` writes it, so the component's ConfigMap holds the chart's bytes.
 * Helm's toJson is Go's json.Marshal (helm pkg/engine/funcs.go, toJSON), which writes a map's keys
 * sorted and escapes <, >, &, U+2028 and U+2029 as \u003c... (Go encoding/json, Marshal: "Map
 * values encode as JSON objects ... keys are sorted", and HTMLEscape). Integers below 1e21 print
 * alike in Go and JavaScript; undefined members are left out, as a map holds none.
 * @internal
 */
export function helmToJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value)).replace(/[<>&\u2028\u2029]/g, (c) => HTML_UNSAFE[c]!);
}

/**
 * Pod-template annotations "checksum/<file>": the sha256 (hex) of each mounted config file's
 * content, so a change rolls the pods. A file mounted by subPath never sees a ConfigMap update
 * ("a container using a ConfigMap as a subPath volume mount will not receive ConfigMap updates",
 * kubernetes.io/docs/concepts/configuration/configmap/), and a file read once at start (a CA
 * bundle, the exec gateway's settings) is not read again. The chart computes the same with Helm's
 * sha256sum over the same value (helm.sh/docs/howto/charts_tips_and_tricks/#automatically-roll-deployments;
 * ansibleforms/helm-charts rolls on its subPath-mounted my.cnf the same way, values.yaml
 * rollOnChange), so the annotations are equal in both front ends. Files not given are left out.
 * @internal
 */
export function configChecksums(files: Record<string, string | undefined>): { annotations?: Record<string, string> } {
  const annotations = Object.fromEntries(
    Object.entries(files)
      .filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== "")
      .map(([file, content]) => [`checksum/${file}`, createHash("sha256").update(content, "utf8").digest("hex")]),
  );
  return Object.keys(annotations).length > 0 ? { annotations } : {};
}
