// Relative links and anchors in Markdown, resolved as GitHub renders them: a link's path is taken
// from the linking file's folder and must exist; a `#anchor` must be the slug of a heading in the
// target Markdown file (or in the same file). External links (a scheme such as https:) are not
// followed: the test runs offline.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** The lines of a Markdown text outside fenced code blocks (links and headings there are only text). */
function proseLines(markdown: string): string[] {
  const prose: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker === fence)) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    if (fence === undefined) prose.push(line);
  }
  return prose;
}

/**
 * GitHub's heading anchor: lowercase, punctuation removed except - and _, each space a -
 * (github-slugger, which GitHub's renderer follows); a repeated slug gets -1, -2, ...
 */
export function headingSlugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

/** Every inline link target `[text](target)` in the prose (code spans, which may span lines of a paragraph, removed first). */
export function linkTargets(markdown: string): string[] {
  const prose = proseLines(markdown)
    .join("\n")
    .replace(/(`+)(?:(?!\1|\n[ \t]*\n)[\s\S])*?\1/g, "code");
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!);
}

/** The links of `file` that do not resolve, each with the reason. */
export function brokenLinks(file: string): string[] {
  const markdown = readFileSync(file, "utf8");
  const broken: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
    const [pathPart = "", anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved = pathPart === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
    if (!existsSync(resolved)) {
      broken.push(`${target}: ${path.relative(path.dirname(file), resolved)} does not exist`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) {
      broken.push(`${target}: an anchor into something that is not a Markdown file`);
      continue;
    }
    if (!headingSlugs(readFileSync(resolved, "utf8")).has(anchor)) {
      broken.push(`${target}: no heading with the anchor #${anchor} in ${path.basename(resolved)}`);
    }
  }
  return broken;
}
