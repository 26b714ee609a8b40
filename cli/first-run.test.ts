// The first run a newcomer makes: `npm start` (the bundled batch on the local stack), with --json. The console,
// the --json rows and the HTML report give one answer, row by row: the same ✓/✗ per scenario, the same group
// answer for a race ("2 of 4 accepted ✓"), the same count, and no consistency banner on a normal run.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

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
beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "claims-first-run-"));
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
