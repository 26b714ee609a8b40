// The repository explains itself: README.md and docs/ are checked against the files, headings and code they
// describe, so a moved file, a renamed heading, a new CLI command, route, bus event, audit event or reason code
// without its page fails here instead of drifting silently. So are every Markdown file's and every code comment's
// file names, and every table that restates the app's manifest (functions, queues, routes) or its alarms.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { COMMANDS } from "../cli/registry.ts";
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
  markdownFiles,
  missingNamedFile,
  readRepoFile,
  sourceComments,
  specPointers,
  staleCommentPaths,
} from "./markdown.test-kit.ts";
import { alarmTableProblems, manifestTableProblems, markdownTables } from "./manifest-tables.test-kit.ts";
import { evaluateSstConfig } from "../infra/testing/sst-recorder.ts";

const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
  cwd: REPO_ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((f) => f !== "");
const docs = documentationFiles(tracked);
/** The names of the repository's files, which a bare file name in a page or a comment must be one of. */
const fileNames = new Set(tracked.filter((f) => existsSync(join(REPO_ROOT, f))).map((f) => posix.basename(f)));
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
      "5 `core/nothing/here.ts`: core/nothing/here.ts is named, but neither core/nothing/here.ts nor docs/core/nothing/here.ts exists",
    ]);
  });

  it("find a file named in backticks or in the prose that no longer exists, from the root or the page's folders", () => {
    const root = mkdtempSync(join(tmpdir(), "docs-names-"));
    mkdirSync(join(root, "infra", "testing"), { recursive: true });
    writeFileSync(join(root, "infra", "testing", "recorder.ts"), "");
    writeFileSync(join(root, "infra", "settings.ts"), "");
    writeFileSync(
      join(root, "infra", "README.md"),
      [
        "`settings.ts`, `testing/recorder.ts`, `infra/settings.ts`, Node.js and `.sst/outputs.json` are fine",
        "`facts.ts` was moved, and so was infra/facts.ts; `npx vitest run` is no file",
      ].join("\n"),
    );
    const names = new Set(["settings.ts", "recorder.ts", "README.md"]);
    expect(brokenLinks("infra/README.md", root, names).map((p) => `${p.line} ${p.message}`)).toEqual([
      "2 `facts.ts`: facts.ts is named, but no file of the repository has that name",
      "2 infra/facts.ts is named, but neither infra/facts.ts nor infra/infra/facts.ts exists",
    ]);
  });

  it("read every comment of a source, and only its comments", () => {
    const source = [
      "// one: core/a.ts",
      'const url = "https://example.com/x.ts"; // two',
      "const re = /\\/\\/ not a comment/g;",
      "const t = `${a}//${b} still a string`; /* three",
      "   on two lines */",
      "const s = '/* no */';",
    ].join("\n");
    expect(sourceComments(source)).toEqual([
      { text: "// one: core/a.ts", line: 1 },
      { text: "// two", line: 2 },
      { text: "/* three\n   on two lines */", line: 4 },
    ]);
    expect(missingNamedFile("core/kernel/kernel.ts", "pipeline/x.ts", fileNames)).toBeUndefined();
    expect(missingNamedFile("replay/events.ts", "core/history/backtest/schemas.ts", fileNames)).toBeUndefined();
    expect(missingNamedFile("decide/outbox.ts", "pipeline/orchestrator.ts", fileNames)).toBeUndefined();
    expect(missingNamedFile("infra/facts.ts", "app/manifest.ts", fileNames)).toMatch(/neither infra\/facts.ts/);
    expect(missingNamedFile("facts.ts", "app/manifest.ts", fileNames)).toMatch(/no file of the repository/);
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

  it.each(markdownFiles(tracked))("%s: every relative link, anchor and named file resolves", (file) => {
    expect(brokenLinks(file, REPO_ROOT, fileNames)).toEqual([]);
  });

  // Every source, tests included: a comment that names a moved file sends its reader to nothing.
  it("every code comment names files that exist", () => {
    const sources = tracked.filter((f) => /\.(ts|mts|mjs|js)$/.test(f) && existsSync(join(REPO_ROOT, f)));
    expect(sources.length).toBeGreaterThan(300);
    expect(
      sources.flatMap((f) => staleCommentPaths(f, fileNames)).map((p) => `${p.file}:${p.line} ${p.message}`),
    ).toEqual([]);
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

  it("docs/cli.md's command table and docs/architecture.md list every command of the registry (cli/registry.ts), and no other", () => {
    const table = markdownTables(readRepoFile("docs/cli.md")).find((t) => t.header[0] === "command");
    const listed = (table?.rows ?? []).map((r) => /^\[`claims ([\w-]+)/.exec(r.cells[0] ?? "")?.[1]);
    expect(listed).toEqual(COMMANDS.map((c) => c.name));
    const architecture = readRepoFile("docs/architecture.md");
    expect(
      COMMANDS.filter((c) => !new RegExp(`[(, ]${c.name}( check)?[,)]`).test(architecture)).map((c) => c.name),
    ).toEqual([]);
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

// ---- the tables that restate the app's manifest (app/) and its alarms: checked here, row by row -----------------

describe("the tables that restate the app's manifest", () => {
  const table = (header: string, ...rows: string[]) =>
    [`| ${header.split(",").join(" | ")} |`, `|${"---|".repeat(header.split(",").length)}`, ...rows].join("\n");

  it("read a Markdown table, escaped pipes and all, and none inside fenced code", () => {
    const page = ["# T", table("a,b", "| `x\\|y` | 2 |"), "```", table("c,d", "| 1 | 2 |"), "```"].join("\n");
    expect(markdownTables(page)).toEqual([{ line: 2, header: ["a", "b"], rows: [{ line: 4, cells: ["`x|y`", "2"] }] }]);
  });

  it("find a function, a queue or a route left out, and a value the manifest does not have", () => {
    const functions = table(
      "key,memory,timeout,links,policy",
      "| `intakeApi` | 512 MB | 15 s | Table, PersonalDataKey, ExtractionQueue, CrewEventsQueue, ApiToken | |",
      "| `kernel` | 256 MB | 30 s | Table, PersonalDataKey, Bus, LlmApiKey | ✓ |",
      "| `timer` | 256 MB | 10 s | Table, CrewEventsQueue, TimersQueue | ✓ |",
    );
    const found = manifestTableProblems("docs/x.md", functions).map((p) => `${p.line} ${p.message}`);
    expect(found[0]).toMatch(
      /^1 the table of functions lacks authorizer, reviewApi, reviewerAuthorizer, .*paymentWebhook$/,
    );
    expect(found.slice(1)).toEqual([
      "4 links: kernel's links are Table, PersonalDataKey, Bus; not its: LlmApiKey",
      "5 memory: timer's memory is 128 MB (app/functions.ts)",
    ]);
    const queues = table(
      "queue,consumer,kind,batch,receives before the DLQ",
      "| crew-events | orchestrator | FIFO | 10 | 5 |",
      "| agent-steps | worker | standard | 1 | 3 |",
      "| proposals | kernel | FIFO | 10 | 5 |",
      "| extraction | intakeExtract | standard | 1 | 5 |",
      "| timers | timer | standard | up to 100, gathered for up to 30 s | 5 |",
    );
    expect(manifestTableProblems("docs/x.md", queues).map((p) => `${p.line} ${p.message}`)).toEqual([
      "4 receives before the DLQ: agent-steps allows 5 receives before its DLQ",
      "5 kind: proposals is standard",
      "7 batch: timers's batch is 100, gathered for up to 60 s",
    ]);
    const routes = table("route,token", "| `POST /claims` | reviewer |", "| `GET /health` | none |");
    const routeProblems = manifestTableProblems("docs/x.md", routes).map((p) => p.message);
    expect(routeProblems[0]).toMatch(/^the table of routes lacks GET \/claims\/\{id\}/);
    expect(routeProblems.slice(1)).toEqual(["token: POST /claims takes the intake token"]);
  });

  it("find an alarm left out, a name that is no alarm and a count that is wrong, what a provider adds included", () => {
    const alarms = ["ADlqMessages", "BDlqMessages", "PDlqMessages", "kernelErrors", "timerErrors", "payErrors"];
    const routes = ["PostXFailures", "GetYFailures", "ReviewBacklog"];
    const page = table(
      "alarm,means",
      "| `<Dlq>Messages` × 2 (`ADlq`, `CDlq`; + `PDlq`) | x |",
      "| `<function>Errors` × 2 (+ 2) | x |",
      "| `<Route>Failures` × 1 (+ `PostXFailures`), e.g. `GetZFailures` | x |",
    );
    const found = alarmTableProblems("infra/README.md", page, [...alarms, ...routes]);
    expect(found.map((p) => `${p.line} ${p.message}`)).toEqual([
      "3 <Dlq>Messages leaves out BDlqMessages",
      "3 CDlqMessages is not an alarm of the app",
      "4 <function>Errors stands for 3 alarms, not 4",
      "5 GetZFailures is not an alarm of the app",
      "1 the table of alarms lacks BDlqMessages, ReviewBacklog",
    ]);
  });

  it.each(markdownFiles(tracked))("%s: its tables of functions, queues and routes agree with app/", (file) => {
    expect(manifestTableProblems(file, readRepoFile(file))).toEqual([]);
  });

  it("infra/README.md's table of alarms names every alarm the app deploys (with PAYMENT_PROVIDER: all of them)", async () => {
    const recording = await evaluateSstConfig({
      stage: "demo",
      env: { PAYMENT_PROVIDER: "stripe", ORDER_SOURCE: undefined, CLAIMS_ALARM_ENDPOINT: undefined },
    });
    const alarms = recording.ofType("aws.cloudwatch.MetricAlarm").map((a) => a.name);
    expect(alarms).toContain("PaymentsDlqMessages"); // the recording deploys everything
    const page = readFileSync(join(REPO_ROOT, "infra", "README.md"), "utf8");
    expect(markdownTables(page).filter((t) => t.header[0] === "alarm")).toHaveLength(1);
    for (const file of markdownFiles(tracked)) expect(alarmTableProblems(file, readRepoFile(file), alarms)).toEqual([]);
  });
});
