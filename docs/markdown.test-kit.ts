// Checks of the repository's Markdown and comments for docs/docs.test.ts: relative links and heading anchors that
// resolve, files named in a page or a code comment that exist, pointers to a document outside the repository, the
// `claims` commands the CLI defines (read from its source, so the reference cannot silently drift), and the
// Markdown tables other checks read.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, posix, relative, resolve } from "node:path";
import ts from "typescript";

/**
 * A pointer to the team's specification, which is not part of the repository: the repository states what users
 * rely on in its own README and docs/, and never points to that file or its section numbers.
 */
export const SPEC_POINTER = /SPEC(\.md)? ?§|SPEC\.md/;

/** The repository's root (this file is in docs/). */
export const REPO_ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");

/**
 * Files a page or a comment may name although they are not in the repository: what the benches, the deploy and a
 * run write (`bench/out/`, `.sst/`, the data directory's files, the deployed policy and batch file), and what the
 * examples tell a user to create.
 */
const NOT_IN_REPOSITORY: readonly (string | RegExp)[] = [
  /^bench\/out\//,
  /^\.?\.?\/?\.sst\//,
  /^\.claims\//,
  "claims-policy.json",
  "claims-batch.yaml",
  "serve.json",
  "local-credentials.json",
  "reviewers.yaml",
  "my-policy.yaml",
  "my-orders.yaml",
];

/** A file path with one of the extensions the repository's files have, as a page or comment names it. */
const NAMED_PATH =
  /(?<![\w./@:-])((?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w-][\w.-]*\.(?:ts|mts|mjs|js|md|json|yaml|yml|sh))(?![\w/-])/g;

/**
 * Why `named`, mentioned in the file `from` (a path inside `root`), names no file of the repository, or undefined
 * when it does. A path with a folder is read from the root, or from the folder of `from` or any folder above it
 * (a file of core/history/ may name one of its replay/ folder so); `./` and `../` from the folder of `from` only.
 * A bare file name must be the name of some file of the repository (`names`). A product name (Node.js) is no file.
 */
export function missingNamedFile(
  named: string,
  from: string,
  names: ReadonlySet<string>,
  root: string = REPO_ROOT,
): string | undefined {
  if (NOT_IN_REPOSITORY.some((n) => (typeof n === "string" ? n === named : n.test(named)))) return undefined;
  if (/^[A-Z][A-Za-z]*\.js$/.test(named)) return undefined;
  if (!named.includes("/"))
    return names.has(named) ? undefined : `${named} is named, but no file of the repository has that name`;
  const folder = posix.dirname(from);
  const bases = /^\.{1,2}\//.test(named)
    ? [folder]
    : [".", ...folder.split("/").map((_, i, parts) => parts.slice(0, parts.length - i).join("/"))];
  return bases.some((base) => existsSync(resolve(root, base, named)))
    ? undefined
    : `${named} is named, but neither ${named} nor ${posix.join(folder, named)} exists`;
}

/** The text of every comment of a JavaScript or TypeScript source, with the line each starts on. */
export function sourceComments(source: string): { text: string; line: number }[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, source);
  const comments: { text: string; line: number }[] = [];
  // A slash after one of these ends a division; anywhere else it opens a regular expression (rescanned as one).
  const endsValue = new Set([
    ts.SyntaxKind.Identifier,
    ts.SyntaxKind.NumericLiteral,
    ts.SyntaxKind.StringLiteral,
    ts.SyntaxKind.CloseParenToken,
    ts.SyntaxKind.CloseBracketToken,
    ts.SyntaxKind.CloseBraceToken,
    ts.SyntaxKind.ThisKeyword,
  ]);
  let previous = ts.SyntaxKind.Unknown;
  // What each open brace closes: a block or object, or a template's `${` (its `}` goes on with the template).
  const braces: ("block" | "template")[] = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      comments.push({
        text: scanner.getTokenText(),
        line: source.slice(0, scanner.getTokenStart()).split("\n").length,
      });
      continue;
    }
    if (kind === ts.SyntaxKind.NewLineTrivia || kind === ts.SyntaxKind.WhitespaceTrivia) continue;
    if ((kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) && !endsValue.has(previous))
      kind = scanner.reScanSlashToken();
    else if (kind === ts.SyntaxKind.OpenBraceToken) braces.push("block");
    else if (kind === ts.SyntaxKind.CloseBraceToken && braces.pop() === "template")
      kind = scanner.reScanTemplateToken(false);
    if (kind === ts.SyntaxKind.TemplateHead || kind === ts.SyntaxKind.TemplateMiddle) braces.push("template");
    previous = kind;
  }
  return comments;
}

/** Every file the code comments of `file` (a source path inside `root`) name that does not exist. */
export function staleCommentPaths(
  file: string,
  names: ReadonlySet<string>,
  root: string = REPO_ROOT,
): MarkdownProblem[] {
  const problems: MarkdownProblem[] = [];
  for (const comment of sourceComments(readFileSync(resolve(root, file), "utf8")))
    for (const m of comment.text.matchAll(NAMED_PATH)) {
      const message = missingNamedFile(m[1]!, file, names, root);
      if (message)
        problems.push({ file, line: comment.line + comment.text.slice(0, m.index).split("\n").length - 1, message });
    }
  return problems;
}

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
 * exist, a link that leaves the repository, every file named in backticks (a path, or a bare file name) and every
 * path named in the prose that does not exist (`missingNamedFile`; `names`: the names of the repository's files).
 */
export function brokenLinks(
  file: string,
  root: string = REPO_ROOT,
  names: ReadonlySet<string> = new Set(),
): MarkdownProblem[] {
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
    // Named in backticks: a path or a bare file name. In the prose: a path (a bare word like Node.js is no file).
    for (const m of text.matchAll(/`([^`]+)`/g)) {
      const named = m[1]!;
      if (!new RegExp(`^${NAMED_PATH.source}$`).test(named)) continue;
      const missing = missingNamedFile(named, file, names, root);
      if (missing) problem(line, `\`${named}\`: ${missing}`);
    }
    const prose = text.replace(/`[^`]*`/g, " ").replace(/\]\([^)]*\)/g, "]");
    for (const m of prose.matchAll(NAMED_PATH)) {
      const named = m[1]!;
      if (!named.includes("/")) continue;
      const missing = missingNamedFile(named, file, names, root);
      if (missing) problem(line, missing);
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

/**
 * Every Markdown file of the repository whose file names must be true: the documentation and each folder's
 * README.md, the bench results — all but bench/NOTES.md, the lab notes of earlier runs, which name files as they
 * were then (it says so at its top).
 */
export function markdownFiles(listed: readonly string[]): string[] {
  return listed.filter((f) => f.endsWith(".md") && f !== "bench/NOTES.md").sort();
}

/** Reads a file of the repository. */
export function readRepoFile(file: string, root: string = REPO_ROOT): string {
  return readFileSync(join(root, file), "utf8");
}
