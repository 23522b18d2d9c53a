/**
 * Pins a chart's images to the digests a release pushed. Given a mapping of image repository ->
 * digest, every `image` in a values file (at any depth, list items included) whose repository is
 * in the mapping is pinned, in either form a chart uses:
 *
 * - a reference string `<repository>[:<tag>][@<digest>]` becomes `<repository>@<digest>`;
 * - a map with `repository` (and optionally `registry`, the Istio/bitnami layout) gets its
 *   `digest` set; its repository is `<registry>/<repository>`, or `repository` alone.
 *
 * The reference grammar is distribution's (github.com/distribution/reference, reference.go:
 * `reference := name [ ":" tag ] [ "@" digest ]`, a tag follows the last `:` after the last `/`).
 * Comments, order and the other values are kept (the yaml package's Document API). A repository
 * in the mapping that no image uses is an error: a release must not ship, unpinned, an image it
 * meant to pin.
 *
 *   tsx scripts/release/pin-digests.ts <values.yaml> <repository>=<sha256:digest>...
 */
import { readFileSync, writeFileSync } from "node:fs";
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node } from "yaml";

const DIGEST = /^sha256:[a-f0-9]{64}$/;
// distribution's name: an optional domain (host[:port]) then lowercase path components.
const REPOSITORY =
  /^(?:[A-Za-z0-9.-]+(?::\d+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

/** One image that was pinned: where in the values, and from what to what. */
export interface Pinned {
  readonly path: string;
  readonly from: string;
  readonly to: string;
}

/** Splits `name[:tag][@digest]` and returns the name (the repository). */
export function repositoryOf(reference: string): string {
  const name = reference.split("@")[0];
  const colon = name.lastIndexOf(":");
  return colon > name.lastIndexOf("/") ? name.slice(0, colon) : name;
}

/** Reads `<repository>=<digest>` arguments into a mapping, refusing malformed ones. */
export function parseMapping(args: string[]): Map<string, string> {
  const mapping = new Map<string, string>();
  for (const arg of args) {
    const at = arg.lastIndexOf("=");
    const [repository, digest] = [arg.slice(0, at), arg.slice(at + 1)];
    if (at < 0 || !REPOSITORY.test(repository))
      throw new Error(`${JSON.stringify(arg)} is not <repository>=<digest> with an image repository`);
    if (!DIGEST.test(digest))
      throw new Error(`the digest of ${repository} must be sha256:<64 hex digits>, not ${JSON.stringify(digest)}`);
    if (mapping.has(repository)) throw new Error(`${repository} is given twice`);
    mapping.set(repository, digest);
  }
  if (mapping.size === 0) throw new Error("name at least one <repository>=<digest>");
  return mapping;
}

/** Pins every `image` of a mapped repository in the values document, in place. */
export function pinDocument(document: Document, mapping: ReadonlyMap<string, string>): Pinned[] {
  const pinned: Pinned[] = [];
  const used = new Set<string>();
  const visit = (node: Node | null | undefined, at: string) => {
    if (isSeq(node)) node.items.forEach((item, index) => visit(item as Node, `${at}[${index}]`));
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : "";
      const here = at ? `${at}.${key}` : key;
      const value = pair.value as Node | null;
      if (key === "image" && isScalar(value) && typeof value.value === "string") {
        const repository = repositoryOf(value.value);
        const digest = mapping.get(repository);
        if (digest) {
          pinned.push({ path: here, from: value.value, to: `${repository}@${digest}` });
          used.add(repository);
          value.value = `${repository}@${digest}`;
        }
      } else if (key === "image" && isMap(value) && typeof value.get("repository") === "string") {
        const registry = value.get("registry");
        const repository = `${typeof registry === "string" && registry ? `${registry}/` : ""}${value.get("repository") as string}`;
        const digest = mapping.get(repository);
        if (digest) {
          pinned.push({ path: `${here}.digest`, from: String(value.get("digest") ?? ""), to: digest });
          used.add(repository);
          value.set("digest", digest);
        }
      } else {
        visit(value, here);
      }
    }
  };
  visit(document.contents as Node, "");
  const missing = [...mapping.keys()].filter((repository) => !used.has(repository));
  if (missing.length > 0) throw new Error(`no image in the values uses ${missing.join(", ")}: nothing to pin`);
  return pinned;
}

/** Pins the images of a values file's text; returns the new text and what was pinned. */
export function pinDigests(
  valuesText: string,
  mapping: ReadonlyMap<string, string>,
): { text: string; pinned: Pinned[] } {
  const document = parseDocument(valuesText);
  if (document.errors.length > 0) throw new Error(`the values do not parse: ${document.errors[0].message}`);
  const pinned = pinDocument(document, mapping);
  return { text: document.toString({ lineWidth: 0, flowCollectionPadding: false }), pinned };
}

function main(): void {
  const [file, ...args] = process.argv.slice(2);
  try {
    if (!file || args.length === 0)
      throw new Error("usage: tsx scripts/release/pin-digests.ts <values.yaml> <repository>=<sha256:digest>...");
    const { text, pinned } = pinDigests(readFileSync(file, "utf8"), parseMapping(args));
    writeFileSync(file, text);
    for (const p of pinned) console.log(`${file}: ${p.path}: ${p.from || "(none)"} -> ${p.to}`);
  } catch (error) {
    process.stderr.write(`pin-digests: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) main();
