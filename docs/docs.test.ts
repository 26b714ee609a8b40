// The repository explains itself: README.md and docs/ are checked against the files, headings and code they
// describe, so a moved file, a renamed heading, a new CLI command, route, bus event, audit event or reason code
// without its page fails here instead of drifting silently.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DETAIL_TYPES } from "../core/kernel/events.ts";
import { REASON_CODES } from "../core/kernel/reason-codes.ts";
import { AUDIT_EVENT_TYPES } from "../core/integrity/audit.ts";
import { ROUTES } from "../app/manifest.ts";
import {
  REPO_ROOT,
  SPEC_POINTER,
  brokenLinks,
  cliCommands,
  cliOptions,
  documentationFiles,
  headingAnchors,
  headingSlug,
  headings,
  readRepoFile,
  specPointers,
} from "./markdown.test-kit.ts";

const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
  cwd: REPO_ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((f) => f !== "");
const docs = documentationFiles(tracked);
const cliSources = tracked
  .filter((f) => /^cli\/[^/]+\.ts$/.test(f) && !f.endsWith(".test.ts"))
  .map((f) => readRepoFile(f));

/** The lines of a page under one heading (up to the next heading of the same or a higher level). */
function section(page: string, heading: string): string {
  const lines = readRepoFile(page).split("\n");
  const start = lines.findIndex((l) => /^#{1,6}\s/.test(l) && l.replace(/^#+\s+/, "") === heading);
  if (start < 0) return "";
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((l, i) => i > start && new RegExp(`^#{1,${level}}\\s`).test(l));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

describe("the Markdown checks", () => {
  it("slug headings as GitHub does", () => {
    expect(headingSlug("`claims config check`")).toBe("claims-config-check");
    expect(headingSlug("The local stack (`local/stack.ts`)")).toBe("the-local-stack-localstackts");
    expect(headingSlug("Claims that never reach a verdict: `NEEDS_REVIEW`")).toBe(
      "claims-that-never-reach-a-verdict-needs_review",
    );
    expect([...headingAnchors("# A\n## A\n```\n# not a heading\n```\n## B & C\n")]).toEqual(["a", "a-1", "b--c"]);
  });

  it("find a missing file, a missing anchor, a link out of the repository and a path that does not exist", () => {
    const root = mkdtempSync(join(tmpdir(), "docs-check-"));
    mkdirSync(join(root, "docs"));
    writeFileSync(join(root, "docs", "b.md"), "# Bee\n");
    writeFileSync(
      join(root, "docs", "a.md"),
      [
        "# A",
        "[fine](b.md#bee) [self](#a) [web](https://example.com/x#y)",
        "[gone](c.md) [no anchor](b.md#wasp)",
        "[outside](../../elsewhere/notes.md) [absolute](/etc/hosts)",
        "`docs/b.md` exists, `core/nothing/here.ts` does not",
        "```",
        "[in a code block](nowhere.md)",
        "```",
      ].join("\n"),
    );
    const found = brokenLinks("docs/a.md", root).map((p) => `${p.line} ${p.message}`);
    expect(found).toEqual([
      "3 c.md: docs/c.md does not exist",
      "3 b.md#wasp: docs/b.md has no heading with the anchor #wasp",
      "4 ../../elsewhere/notes.md: points outside the repository",
      "4 /etc/hosts: an absolute path; link to a file of the repository by a relative path",
      "5 `core/nothing/here.ts` is named but does not exist",
    ]);
  });

  it("read nested CLI commands and report commands registered another way", () => {
    const { commands, unknownReceivers } = cliCommands([
      'program\n  .command("batch")\nconst tools = program.command("tools");\ntools.command("fix <id>")\nother.command("x")',
    ]);
    expect(commands).toEqual([["batch"], ["tools"], ["tools", "fix"]]);
    expect(unknownReceivers).toEqual(['other.command("x")']);
  });

  it("recognise a pointer to the team's specification", () => {
    // Built from parts, so this file holds no pointer itself once the check covers the whole repository.
    const spec = "SPEC";
    for (const text of [`see ${spec} §4.2`, `(${spec}.md §7)`, `${spec}§9`, `read ${spec}.md`])
      expect(text).toMatch(SPEC_POINTER);
    for (const text of ["the spec says", "SPECIFIC", "a SPEC error body"]) expect(text).not.toMatch(SPEC_POINTER);
  });
});

describe("README.md and docs/", () => {
  it("are README.md and at least the contract pages", () => {
    expect(docs).toContain("README.md");
    expect(docs.filter((f) => f.startsWith("docs/")).length).toBeGreaterThanOrEqual(10);
  });

  it.each(docs)("%s: every relative link, anchor and named file resolves", (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it("README.md links every page of docs/", () => {
    const readme = readRepoFile("README.md");
    const pages = readdirSync(join(REPO_ROOT, "docs")).filter((f) => f.endsWith(".md"));
    expect(pages.filter((p) => !readme.includes(`](docs/${p})`))).toEqual([]);
  });

  // Every tracked file, code comments included: the contracts users rely on are stated here, in README and docs/.
  it("point to no document outside the repository (the team's specification), and neither does any other file", () => {
    expect(specPointers(docs)).toEqual([]);
    expect(specPointers(tracked.filter((f) => f !== "package-lock.json" && existsSync(join(REPO_ROOT, f))))).toEqual(
      [],
    );
  });
});

describe("the references cover what the code defines", () => {
  it("docs/cli.md has a heading for every command of the CLI, and none for a command it does not define", () => {
    const { commands, unknownReceivers } = cliCommands(cliSources);
    expect(unknownReceivers).toEqual([]);
    const names = commands.map((c) => `claims ${c.join(" ")}`);
    expect(names).toContain("claims review approve");
    const documented = headings(readRepoFile("docs/cli.md")).flatMap((h) => /^`(claims [\w -]+)`$/.exec(h)?.[1] ?? []);
    expect(names.filter((n) => !documented.includes(n))).toEqual([]);
    expect(documented.filter((d) => !names.includes(d))).toEqual([]);
  });

  it("docs/cli.md names every option of the CLI", () => {
    const page = readRepoFile("docs/cli.md");
    expect(cliOptions(cliSources).filter((o) => !page.includes(o))).toEqual([]);
  });

  it("docs/http-api.md lists every route", () => {
    const page = readRepoFile("docs/http-api.md");
    expect(Object.keys(ROUTES).filter((route) => !page.includes(`| \`${route}\` |`))).toEqual([]);
  });

  it("docs/events.md has a section for every bus event", () => {
    const documented = headings(readRepoFile("docs/events.md"));
    expect(Object.values(DETAIL_TYPES).filter((t) => !documented.includes(`\`${t}\``))).toEqual([]);
  });

  it("docs/audit.md describes every audit event type", () => {
    const page = section("docs/audit.md", "Event types and their details");
    expect(AUDIT_EVENT_TYPES.filter((t) => !page.includes(`\`${t}\``))).toEqual([]);
  });

  it("docs/kernel.md lists every reason code with its verdict", () => {
    const page = section("docs/kernel.md", "Reason codes and customer messages");
    const missing = Object.entries(REASON_CODES).filter(
      ([code, { verdict }]) => !new RegExp(`^\\| \`${code}\` \\| [\\w]+ \\| ${verdict} \\|`, "m").test(page),
    );
    expect(missing.map(([code]) => code)).toEqual([]);
  });
});
