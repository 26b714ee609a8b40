// `claims backtest` on a recorded bundled run — the first --json as a user runs it (a child process of
// bin/claims.mjs), the others through the same program in the test's process (cli/cli-in-process.test-kit.ts): the
// --json contract, the human output, the HTML report, a policy with a mistake refused like `claims config
// check` refuses it (exit 2, the error at its line), a policy file's own shadow_policy ignored with a note, and
// nothing in the data directory written. A long time limit, since the machine may be busy.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import {
  configWithCustomerLimits,
  configWithLimit,
  recordBundledRun,
} from "../core/history/backtest/backtest.test-kit.ts";
import type { BundledRun } from "../core/history/backtest/backtest.test-kit.ts";
import { claimsInProcess } from "./cli-in-process.test-kit.ts";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;

/** `claims ARGS` in this process. */
const claims = (args: string[]) => claimsInProcess(args);

/** `claims ARGS` as a user runs it: a child process of bin/claims.mjs. */
async function claimsBinary(args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, "bin/claims.mjs"), ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1" },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Every file under `dir` with its size and modification time. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => `${f} ${statSync(f).size} ${statSync(f).mtimeMs}`)
    .sort();
}

let bundled: BundledRun;
let policy100: string;
/** The bundled run, named: a backtest reads the served traffic unless a demo run is named. */
let recorded: string[];
beforeAll(async () => {
  bundled = await recordBundledRun();
  policy100 = join(bundled.dataDir, "..", `policy-100-${process.pid}.yaml`);
  recorded = ["--data-dir", bundled.dataDir, "--simulation-id", bundled.simulationId];
  writeFileSync(policy100, configWithLimit(100));
}, 60_000);

describe("claims backtest", () => {
  it("prints the flips, totals and reviews as --json and for a person, writes the HTML report, and writes nothing else", async () => {
    const before = snapshot(bundled.dataDir);
    const out = join(bundled.dataDir, "..", `backtest-${process.pid}.html`);
    const [json, human] = await Promise.all([
      claimsBinary(["backtest", "--policy", policy100, ...recorded, "--json"]),
      claims(["backtest", "--policy", policy100, ...recorded, "--out", out]),
    ]);
    expect(json.code, json.stderr).toBe(0);
    const r = JSON.parse(json.stdout) as Record<string, unknown> & {
      flips: { claim_id: string; from: unknown; to: unknown }[];
      totals: { before: Record<string, unknown>; after: Record<string, unknown> };
    };
    // G was triaged (nothing left on ord_001 after A); with A sent to a person the candidate's triage lets it through.
    // 50 decided claims in the bundled run (R never reached a verdict), G not evaluable.
    expect(r.evaluated).toBe(51);
    expect(r.not_evaluable).toEqual([
      {
        claim_id: bundled.claimOf("G"),
        reason: expect.stringContaining("the candidate's triage sends it to the crew"),
      },
    ]);
    expect(r.flips).toContainEqual({
      claim_id: bundled.claimOf("A"),
      from: { verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" },
      to: { verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT" },
    });
    // A, E, J, S1, PB (300 EUR), the returns RT1 (280) and RT3 (150), and PB2 waits for PB's review instead.
    expect(r.flips).toHaveLength(8);
    // FE (2000 EUR, approved by two people) is a review under either limit, as are FS1 and FS2, and RT4 (its return
    // failed inspection and a person denied it): 18 → 26, never a flip.
    expect(r.totals.before).toMatchObject({ auto_refunded_eur: 2778.98, reviews: 18 });
    expect(r.totals.after).toMatchObject({ auto_refunded_eur: 599, reviews: 26 });
    expect(r.totals.after.by_reason).toMatchObject({ AMOUNT_ABOVE_LIMIT: 14, REVIEW_PENDING_ON_ORDER: 4 });

    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("Flips (8):");
    expect(human.stdout).toContain("Refunded automatically: 2778.98 EUR → 599.0 EUR (−2179.98 EUR)");
    expect(human.stdout).toContain(
      "Paid before the item was back: 18 → 13 claims; 2498.98 EUR → 599.00 EUR; 12800 JPY → 12800 JPY; 569.00 USD → 569.00 USD",
    );
    expect(human.stdout).toContain("Reviews (sent to a person): 18 → 26 (+8)");
    expect(human.stdout).toMatch(/AMOUNT_ABOVE_LIMIT +7 → 14 +\(\+7\)/);
    expect(human.stdout).toContain("Not evaluable (1): left out of the figures above");
    // What the candidate changes, against the policy the recorded decisions were taken under.
    expect(r.policy).toMatchObject({ changes: [{ setting: "max_refund_without_escalation", from: "500", to: "100" }] });
    expect(human.stdout).toContain("What changes: max_refund_without_escalation 500 → 100");
    // The reviewers' notes beside the decisions they took.
    expect(human.stdout).toMatch(new RegExp(`${bundled.claimOf("DB")} +DENY by demo-reviewer .*note: "Fraud pattern"`));
    expect(readFileSync(out, "utf8")).toContain("<q>Fraud pattern</q>");
    expect(human.stdout).toContain(bundled.claimOf("G"));
    expect(readFileSync(out, "utf8")).toContain(`id="flip-${bundled.claimOf("A")}"`);
    expect(snapshot(bundled.dataDir)).toEqual(before);
  }, 120_000);

  it("reads the served traffic by default: a data directory with demo runs only is refused, naming --simulation-id", async () => {
    const served = await claims(["backtest", "--policy", policy100, "--data-dir", bundled.dataDir]);
    expect(served.code).toBe(2);
    expect(served.stdout).toBe("");
    expect(served.stderr).toContain(`no served claims in ${bundled.dataDir}`);
    expect(served.stderr).toContain(`--simulation-id ${bundled.simulationId}`);
  }, 120_000);

  it("ignores the policy file's own shadow_policy, saying so, and decides its live policy alone", async () => {
    const shadowed = join(bundled.dataDir, "..", `policy-shadowed-${process.pid}.yaml`);
    const shadow = [
      "shadow_policy:",
      "  agents:",
      '    - agent_id: "claims_agent_v1"',
      "      contract: { role: EXECUTOR, allowed_policy_types: [REFUND, ESCALATE], authorized_categories: [home] }",
      "      claims_bounds: { max_refund_without_escalation: 10, return_window_days: 1 }",
      "",
    ].join("\n");
    writeFileSync(shadowed, configWithLimit(100).replace("context_store:", `${shadow}context_store:`));
    const [json, human, plain] = await Promise.all([
      claims(["backtest", "--policy", shadowed, ...recorded, "--json"]),
      claims(["backtest", "--policy", shadowed, ...recorded]),
      claims(["backtest", "--policy", policy100, ...recorded, "--json"]),
    ]);
    expect(json.code, json.stderr).toBe(0);
    const r = JSON.parse(json.stdout) as { policy: Record<string, unknown> } & Record<string, unknown>;
    expect(r.policy.ignored_shadow_policy).toEqual({
      agent_id: "claims_agent_v1",
      version: "1.0.0",
      note: expect.stringContaining("ignored: a backtest decides one candidate policy"),
    });
    expect(json.stderr).toContain("shadow_policy (agent claims_agent_v1) is ignored");
    // The same result as the file without its shadow policy: the shadow decided nothing.
    const { policy: _p, ...rest } = r;
    const { policy: _q, ...plainRest } = JSON.parse(plain.stdout) as typeof r;
    expect(rest).toEqual(plainRest);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("The file's shadow_policy (agent claims_agent_v1 v1.0.0) is ignored");
  }, 120_000);

  it("flips the customer's claims on windows simulated from the candidate's own refunds, both ways", async () => {
    const policyFor = (max: number) => {
      const file = join(bundled.dataDir, "..", `policy-customer-${max}-${process.pid}.yaml`);
      writeFileSync(
        file,
        configWithCustomerLimits({ window_days: 30, max_automatic_refunds: max, max_automatic_eur: 500 }),
      );
      return file;
    };
    const [tighter, looser] = await Promise.all(
      [1, 3].map((max) => claims(["backtest", "--policy", policyFor(max), ...recorded, "--json"])),
    );
    const limited = { verdict: "ESCALATE", reason_code: "CUSTOMER_LIMIT_EXCEEDED" };
    const accepted = { verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" };
    expect(tighter!.code, tighter!.stderr).toBe(0);
    expect(JSON.parse(tighter!.stdout)).toMatchObject({
      flips: [{ claim_id: bundled.claimOf("CL2"), from: accepted, to: limited }],
      totals: { after: { auto_refunded_eur: 2718.98, by_reason: { CUSTOMER_LIMIT_EXCEEDED: 3 } } },
    });
    // Three refunds: CL3 now passes, and its own refund fills the window, so CL4 still waits for a person.
    expect(looser!.code, looser!.stderr).toBe(0);
    expect(JSON.parse(looser!.stdout)).toMatchObject({
      flips: [{ claim_id: bundled.claimOf("CL3"), from: limited, to: accepted }],
      totals: { after: { auto_refunded_eur: 2838.98, by_reason: { CUSTOMER_LIMIT_EXCEEDED: 1 } } },
    });
  }, 120_000);

  it("refuses a policy with a mistake as claims config check does: exit 2, the error at its line", async () => {
    const bad = join(bundled.dataDir, "..", `policy-bad-${process.pid}.yaml`);
    writeFileSync(
      bad,
      configWithLimit(100).replace("review_due_hours: 24", "review_due_hours: 24\n      max_refund_per_day: 50"),
    );
    const refusedVersion = join(bundled.dataDir, "..", `policy-v2-${process.pid}.yaml`);
    writeFileSync(refusedVersion, configWithLimit(100).replace('version: "1.2.0"', 'version: "2.0.0"'));
    const [mistake, version, check, nothing] = await Promise.all([
      claims(["backtest", "--policy", bad, "--data-dir", bundled.dataDir]),
      claims(["backtest", "--policy", refusedVersion, "--data-dir", bundled.dataDir]),
      claims(["config", "check", bad]),
      claims(["backtest", "--policy", policy100, "--data-dir", join(bundled.dataDir, "nothing-here")]),
    ]);
    const line = configWithLimit(100).split("\n").indexOf("      review_due_hours: 24") + 2;
    expect(mistake.code).toBe(2);
    expect(mistake.stderr).toContain(`:${line}`);
    expect(mistake.stderr).toContain("max_refund_per_day");
    expect(mistake.stderr).toBe(check.stderr);
    expect(mistake.stdout).toBe("");
    expect(version.code).toBe(2);
    expect(version.stderr).toMatch(/refused by the registry/);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/no served claims and no recorded runs in .*nothing-here/);
  }, 120_000);
});
