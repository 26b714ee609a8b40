// Checks of the repository's Markdown for docs/docs.test.ts: relative links and heading anchors that resolve, file
// paths named in backticks that exist, pointers to a document outside the repository, and the `claims` commands
// the CLI defines (read from its source, so the reference cannot silently drift).
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";

/**
 * A pointer to the team's specification, which is not part of the repository: the repository states what users
 * rely on in its own README and docs/, and never points to that file or its section numbers.
 */
export const SPEC_POINTER = /SPEC(\.md)? ?§|SPEC\.md/;

/** The repository's root (this file is in docs/). */
export const REPO_ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");

/** Files the build writes, which a page may name although they are not in the repository. */
const GENERATED = new Set(["bench/out/latest.md", "docs/docs.test.ts"]);

/** One problem found in a Markdown file, with its line. */
export interface MarkdownProblem {
  file: string;
  line: number;
  message: string;
}

/**
 * The anchor GitHub gives a heading: its text without Markdown (code marks, emphasis, link targets), lower-cased,
 * with every character that is not a letter, digit, `_`, `-` or space dropped and spaces turned into `-`.
 */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, "").replace(/ /g, "-");
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (/^\s*```/.test(text)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) out.push({ text, line: i + 1 });
  });
  return out;
}

/** The anchors of a Markdown document's headings (a repeated heading gets `-1`, `-2`, … as on GitHub). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(text);
    if (!m) continue;
    const base = headingSlug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The headings of a Markdown document, as written (without the `#` marks). */
export function headings(markdown: string): string[] {
  return proseLines(markdown).flatMap(({ text }) => {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(text);
    return m ? [m[1]!] : [];
  });
}

/**
 * Every relative link of `file` (a path inside `root`) that points to a file or a heading anchor that does not
 * exist, a link that leaves the repository, and every file path named in backticks that does not exist.
 */
export function brokenLinks(file: string, root: string = REPO_ROOT): MarkdownProblem[] {
  const path = resolve(root, file);
  const markdown = readFileSync(path, "utf8");
  const problems: MarkdownProblem[] = [];
  const problem = (line: number, message: string) => problems.push({ file, line, message });
  for (const { text, line } of proseLines(markdown)) {
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
      const [filePart, anchor] = target.split("#", 2) as [string, string | undefined];
      if (isAbsolute(filePart)) {
        problem(line, `${target}: an absolute path; link to a file of the repository by a relative path`);
        continue;
      }
      const resolved = filePart === "" ? path : resolve(dirname(path), filePart);
      const inside = relative(root, resolved);
      if (inside.startsWith("..") || isAbsolute(inside)) {
        problem(line, `${target}: points outside the repository`);
        continue;
      }
      if (!existsSync(resolved)) {
        problem(line, `${target}: ${inside} does not exist`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) {
        problem(line, `${target}: an anchor on a file that is not Markdown`);
        continue;
      }
      if (!headingAnchors(readFileSync(resolved, "utf8")).has(anchor))
        problem(line, `${target}: ${inside} has no heading with the anchor #${anchor}`);
    }
    for (const m of text.matchAll(/`([A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+\.(?:ts|mjs|js|md|json|yaml|sh))`/g)) {
      const named = m[1]!;
      if (!GENERATED.has(named) && !existsSync(resolve(root, named)))
        problem(line, `\`${named}\` is named but does not exist`);
    }
  }
  return problems;
}

/** The lines of `files` (paths inside `root`) that point to the team's specification. */
export function specPointers(files: readonly string[], root: string = REPO_ROOT): MarkdownProblem[] {
  return files.flatMap((file) =>
    readFileSync(resolve(root, file), "utf8")
      .split("\n")
      .flatMap((text, i) => (SPEC_POINTER.test(text) ? [{ file, line: i + 1, message: text.trim() }] : [])),
  );
}

/**
 * The commands the `claims` CLI defines, each as its words (`["review", "approve"]`), read from the commander calls
 * in the CLI's sources: `program.command("x")` is a top-level command, `parent.command("y")` a subcommand of the
 * command assigned to `parent` (`const parent = program.command("x")`). A `.command(` on any other receiver is
 * reported, so a new way of registering commands cannot hide one from the check.
 */
export function cliCommands(sources: readonly string[]): { commands: string[][]; unknownReceivers: string[] } {
  const parents = new Map<string, string>();
  for (const source of sources)
    for (const m of source.matchAll(/const\s+(\w+)\s*=\s*program\s*\.command\(\s*"([\w-]+)/g))
      parents.set(m[1]!, m[2]!);
  const commands: string[][] = [];
  const unknownReceivers: string[] = [];
  for (const source of sources) {
    for (const m of source.matchAll(/(\w+)\s*\.command\(\s*"([\w-]+)/g)) {
      const [, receiver, name] = m as unknown as [string, string, string];
      if (receiver === "program") commands.push([name]);
      else if (parents.has(receiver)) commands.push([parents.get(receiver)!, name]);
      else unknownReceivers.push(`${receiver}.command("${name}")`);
    }
  }
  return { commands, unknownReceivers };
}

/** The long options (`--flag`) the CLI's sources declare with commander's `.option` / `.requiredOption`. */
export function cliOptions(sources: readonly string[]): string[] {
  const options = new Set<string>();
  for (const source of sources)
    for (const m of source.matchAll(/\.(?:option|requiredOption)\(\s*"(?:-\w,\s*)?(--[\w-]+)/g)) options.add(m[1]!);
  return [...options].sort();
}

/** The Markdown files of the repository's own documentation: README.md and every page in docs/. */
export function documentationFiles(listed: readonly string[]): string[] {
  return listed.filter((f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f)).sort();
}

/** Reads a file of the repository. */
export function readRepoFile(file: string, root: string = REPO_ROOT): string {
  return readFileSync(join(root, file), "utf8");
}
