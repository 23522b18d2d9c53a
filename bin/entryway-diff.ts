#!/usr/bin/env node
/**
 * entryway-diff [--exit-code] [--json | --summary] <before> <after>
 *
 * The manifest-level diff of two renderings of Kubernetes objects, shipped in the package
 * (`npx entryway-diff`): each of <before> and <after> is a folder of YAML files (`npm run render`'s
 * output, the Kubernetes provider's `renderYamlToDirectory`) or one file of YAML documents
 * (`helm template`). Prints a summary (objects added, changed and removed, by kind) and each
 * object's diff; exits 0, or 1 with --exit-code when anything differs, and 2 on bad input.
 */
import { ManifestDiffError, OPTIONS_USAGE, parseDiffOptions, reportRenderings } from "./manifest-diff";

function main(args: string[]): number {
  const options = parseDiffOptions(args);
  if (options.positional.length !== 2) {
    throw new ManifestDiffError(`usage: entryway-diff ${OPTIONS_USAGE} <before> <after>`);
  }
  const [before, after] = options.positional;
  return reportRenderings({ before, after }, { before, after }, options);
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  // 1 means "differs": any failure is 2, as with diff(1).
  const message = error instanceof ManifestDiffError ? error.message : String(error);
  console.error(`entryway-diff: ${message}`);
  process.exitCode = 2;
}
