// The first run a newcomer makes: `npm start` (the bundled batch on the local stack), with --json. The console,
// the --json rows and the HTML report give one answer, row by row: the same ✓/✗ per scenario, the same group
// answer for a race ("2 of 4 accepted ✓"), the same count, and no consistency banner on a normal run. Then
// docs/backtest.md's worked example and its customer-limit claims, run on what that `npm start` recorded.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { claimsInProcess } from "./cli-in-process.test-kit.ts";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;

interface JsonRow {
  id: string;
  verdict: string;
  matches: boolean;
  race?: { name: string; outcome: string; matches: boolean };
}

let rows: JsonRow[];
let consoleText: string;
let report: string;
let code: number;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "claims-first-run-"));
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const done = await run(npm, ["run", "-s", "start", "--", "--json", "--data-dir", dataDir], {
    cwd: root,
    env: { ...process.env, NO_COLOR: "1" },
    maxBuffer: 32 * 1024 * 1024,
  }).then(
    (r) => ({ ...r, code: 0 }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  code = done.code;
  rows = JSON.parse(done.stdout) as JsonRow[];
  consoleText = done.stderr;
  const runDir = readdirSync(join(dataDir, "runs")).find((d) => d !== "LATEST");
  report = readFileSync(join(dataDir, "runs", runDir ?? "", "report.html"), "utf8");
}, 300_000);

/** The summary's line of a row: its mark and what follows the label. */
function summaryLine(id: string): { mark: string; tail: string } {
  const summary = consoleText.slice(consoleText.lastIndexOf("Summary"));
  const line = summary
    .split("\n")
    .find((l) => new RegExp(`^  [✓✗] \\S+ +${id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} `).test(l));
  if (line === undefined) throw new Error(`no summary line for ${id}`);
  return { mark: line.trim()[0] ?? "", tail: line };
}

/** The report's trace row of a scenario: its data-match and the text of its match cell. */
function reportRow(id: string): { match: string; cell: string } | undefined {
  const tr = report.match(new RegExp(`<tr [^>]*data-scenario="${id}" data-match="(true|false|)">([\\s\\S]*?)</tr>`));
  if (!tr) return undefined;
  const cell = tr[2]?.match(/<td class="center">([\s\S]*?)<\/td>/)?.[1]?.replace(/<[^>]+>/g, "") ?? "";
  return { match: tr[1] ?? "", cell: cell.trim() };
}

describe("npm start: console, --json and report agree", () => {
  it("exits 0 with every row matched, the same count in the console and the report, and no consistency banner", () => {
    expect(code, consoleText.slice(-2000)).toBe(0);
    const counted = consoleText.match(/(\d+)\/(\d+) scenarios match/);
    expect(counted?.slice(1)).toEqual([String(rows.filter((r) => r.matches).length), String(rows.length)]);
    expect(report).toContain(
      `<span data-summary="matched">${counted?.[1]}</span> / <span data-summary="total">${counted?.[2]}</span>`,
    );
    expect(report).not.toContain('data-banner="mismatch"');
    expect(report).not.toContain('data-banner="incomplete"');
  });

  it("prints the README's sample console lines, durations and the run folder aside", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const block = readme.slice(readme.indexOf("## What `npm start` shows")).match(/```\n([\s\S]*?)```/)?.[1] ?? "";
    const same = (line: string) =>
      line
        .replaceAll(dataDir, ".claims")
        .replace(/ {2}\d+ ms$/, "  <ms>")
        .replace(/ in [\d.]+ s\.$/, " in <s>.")
        .replace(/claims_batch_001_\d{8}T\d{6}Z/, "<run>")
        .trimEnd();
    const printed = new Set(consoleText.split("\n").map(same));
    const sample = block.split("\n").filter((l) => l.trim() !== "" && l.trim() !== "…");
    expect(sample.length).toBeGreaterThan(8);
    for (const line of sample) expect(printed.has(same(line)), line).toBe(true);
  });

  it("prints no Node warning on the console (a newcomer's first run shows only the run)", () => {
    expect(consoleText).not.toMatch(/Warning|\(node:\d+\)/);
  });

  it("gives every row the same mark in the summary, the --json rows and the report's trace", () => {
    let inReport = 0;
    for (const r of rows) {
      expect(summaryLine(r.id).mark, r.id).toBe(r.matches ? "✓" : "✗");
      const shown = reportRow(r.id);
      // Review steps are a person's decisions on earlier claims: the trace lists claims, the summary counts steps.
      if (shown === undefined) continue;
      inReport++;
      expect(shown.match, r.id).toBe(String(r.matches));
      expect(shown.cell, r.id).toBe(r.race ? `${r.race.outcome} ${r.race.matches ? "✓" : "✗"}` : r.matches ? "✓" : "✗");
    }
    expect(inReport).toBeGreaterThan(30);
  });

  it("shows the customer-limit race as one group answer everywhere: the race line, the summary, --json and the report", () => {
    const race = rows.filter((r) => r.race?.name === "customer-limit");
    expect(race.map((r) => r.id)).toEqual(["CL1", "CL2", "CL3", "CL4"]);
    expect(race.filter((r) => r.verdict === "ACCEPT")).toHaveLength(2);
    for (const r of race) {
      expect(r.race).toEqual({ name: "customer-limit", outcome: "2 of 4 accepted", matches: true });
      expect(r.matches).toBe(true);
      expect(summaryLine(r.id).tail).toContain("(race customer-limit: 2 of 4 accepted ✓)");
    }
    expect(consoleText).toContain("Race customer-limit (CL1, CL2, CL3, CL4): 2 of 4 accepted ✓");
    // No row of a race is marked on its own before the group is known: no ✗ beside a race row's verdict.
    for (const block of consoleText.split("\n\n").filter((b) => /^\[\d+\/\d+\] CL\d/.test(b)))
      expect(block).toMatch(/Verdict {2}: .* · race customer-limit, matched as a group below/);
  });
});

/** `claims ARGS` in this process (cli/cli-in-process.test-kit.ts; cli/backtest.test.ts runs the binary); never throws. */
const claims = (args: string[]) => claimsInProcess(args);

const BUNDLED_CONFIG = readFileSync(join(root, "scenarios/config.yaml"), "utf8");

/** A policy file made from the bundled config with one line changed, as the docs say to make it. */
function policy(name: string, from: string, to: string): string {
  if (!BUNDLED_CONFIG.includes(from)) throw new Error(`the bundled config has no '${from}'`);
  const file = join(dataDir, name);
  writeFileSync(file, BUNDLED_CONFIG.replace(from, to));
  return file;
}

describe("docs/backtest.md on the run npm start recorded", () => {
  const runId = () => readFileSync(join(dataDir, "runs", "LATEST"), "utf8").trim();

  /** `claims backtest` of the run npm start recorded, under the candidate policy `file`. */
  const backtestOf = (file: string, ...extra: string[]) =>
    claims(["backtest", "--policy", file, "--data-dir", dataDir, "--simulation-id", runId(), ...extra]);

  it("reproduces the worked example's output, claim ids and the run's id aside", async () => {
    const file = policy(
      "policy-100.yaml",
      "max_refund_without_escalation: 500.0",
      "max_refund_without_escalation: 100.0",
    );
    const out = join(dataDir, "backtest.html");
    const shown = await backtestOf(file, "--out", out);
    expect(shown.code, shown.stderr).toBe(0);
    const docs = readFileSync(join(root, "docs/backtest.md"), "utf8");
    const example = docs.slice(docs.indexOf("## Worked example")).match(/```text\n([\s\S]*?)```/)?.[1];
    const same = (text: string) =>
      text
        .replaceAll(dataDir, ".claims")
        .replace(/clm_[0-9a-f]{20}/g, "clm_<id>")
        .replace(/claims_batch_001_\d{8}T\d{6}Z/g, "<run>");
    expect(same(shown.stdout)).toBe(same(example ?? ""));
  }, 120_000);

  it("flips the customer-limit race's claims as the docs say, whichever two the race refunded", async () => {
    const limits = "customer_limits: { window_days: 30, max_automatic_refunds: 2, max_automatic_eur: 500.0 }";
    const variant = (refunds: number, eur: string) =>
      policy(
        `policy-cl-${refunds}-${eur}.yaml`,
        limits,
        `customer_limits: { window_days: 30, max_automatic_refunds: ${refunds}, max_automatic_eur: ${eur} }`,
      );
    type Flip = { claim_id: string; from: { verdict: string }; to: { verdict: string; reason_code: string } };
    const flipsOf = async (file: string) => {
      const r = await backtestOf(file, "--json");
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as {
        flips: Flip[];
        flip_details: { to: { reason: string } }[];
        totals: { before: { auto_refunded_eur: number }; after: { auto_refunded_eur: number } };
      };
    };
    const claimOf = (verdict: string) =>
      (rows as (JsonRow & { claim_id: string })[])
        .filter((r) => r.race && r.verdict === verdict)
        .map((r) => r.claim_id);
    const [one, three, atLimit, overLimit] = await Promise.all([
      flipsOf(variant(1, "500.0")),
      flipsOf(variant(3, "500.0")),
      flipsOf(variant(10, "120.0")),
      flipsOf(variant(10, "119.99")),
    ]);
    // max_automatic_refunds: 1 — the second refunded claim goes to a person; 60 EUR less refunded automatically.
    expect(one.flips).toHaveLength(1);
    expect(claimOf("ACCEPT")).toContain(one.flips[0]?.claim_id);
    expect(one.flips[0]?.to).toEqual({ verdict: "ESCALATE", reason_code: "CUSTOMER_LIMIT_EXCEEDED" });
    expect(one.flip_details[0]?.to.reason).toContain(
      "Customer cus_0100 already has 1 automatic refund (60.0 EUR) in the last 30 days; max_automatic_refunds is 1",
    );
    expect(one.totals.after.auto_refunded_eur).toBe(Math.round((one.totals.before.auto_refunded_eur - 60) * 100) / 100);
    // 3 — one of the two escalated claims is refunded, the other still goes to a person.
    expect(three.flips).toHaveLength(1);
    expect(claimOf("ESCALATE")).toContain(three.flips[0]?.claim_id);
    expect(three.flips[0]?.to.verdict).toBe("ACCEPT");
    // 120 EUR: 60 + 60 is exactly the limit; 119.99 flips the same claim a count of 1 does.
    expect(atLimit.flips).toEqual([]);
    expect(overLimit.flips.map((f) => f.claim_id)).toEqual([one.flips[0]?.claim_id]);
  }, 120_000);
});
