// Erasure and access over a data directory (issue 38, docs/customer-data.md): one customer with a refunded, a
// reviewed-and-refunded, a rejected and a free-text claim, another customer beside them. After `claims erase`,
// no byte the data directory keeps holds the customer's words, every claim still replays IDENTICAL and the
// backtest decides them as before; the other customer's words are untouched.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { backtest } from "../core/history/backtest/index.ts";
import { policyOf } from "../core/history/backtest/backtest.test-kit.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { ERASED } from "../core/privacy/sealing.ts";
import { createInProcessRuntime } from "../local/runtime.ts";
import { runBatch } from "./batch.ts";
import { claimsInProcess } from "./cli-in-process.test-kit.ts";
import { eraseInRuns, exportCustomer, sweepRetention } from "./customer-data.ts";
import { writeReportFor } from "./report-run.ts";
import { loadRunAudit, loadSealedRunAudit, writeRunAudit } from "./run-store.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const NOW = Date.parse("2026-06-01T12:00:00Z");

/** The customer's words: each must vanish from every byte after the erasure. */
const ZELDA = [
  "Zelda Quirinius",
  "zelda.quirinius@example.com",
  "+49 171 9876543",
  "DE89 3704 0044 0532 0130 00",
  "Quirinius",
];
const KARL = "Karl Keepmann";

const CONFIG = readFileSync(join(ROOT, "scenarios/config.yaml"), "utf8")
  .trimEnd()
  .concat(`
    ord_e1: { purchase_date: "-3d",  category: electronics, amount: 80.00,   customer_id: cus_zelda }
    ord_e2: { purchase_date: "-3d",  category: electronics, amount: 1200.00, customer_id: cus_zelda }
    ord_e3: { purchase_date: "-60d", category: electronics, amount: 90.00,   customer_id: cus_zelda }
    ord_e4: { purchase_date: "-3d",  category: home,        amount: 45.00,   customer_id: cus_zelda }
    ord_k1: { purchase_date: "-3d",  category: home,        amount: 30.00,   customer_id: cus_karl }
`);

const SCENARIOS = `
scenarios:
  - id: Z1
    label: "refunded"
    context:
      claim: { order_id: ord_e1, amount_eur: 80.0, category: electronics, customer_id: cus_zelda, reason: "Kettle leaks. Zelda Quirinius, zelda.quirinius@example.com, +49 171 9876543" }
    expected: { verdict: ACCEPT, reason_code: VALIDATION_PASSED }
  - id: Z2
    label: "escalated, then approved"
    context:
      claim: { order_id: ord_e2, amount_eur: 1200.0, category: electronics, customer_id: cus_zelda, reason: "Laptop dead, call Zelda Quirinius on +49 171 9876543" }
    expected: { verdict: ESCALATE, reason_code: AMOUNT_ABOVE_LIMIT }
  - id: Z3
    label: "rejected"
    context:
      claim: { order_id: ord_e3, amount_eur: 90.0, category: electronics, customer_id: cus_zelda, reason: "Too late, I know. Zelda Quirinius" }
    expected: { verdict: REJECT, reason_code: OUTSIDE_RETURN_WINDOW }
  - id: Z4
    label: "free text"
    context:
      claim_text: "My lamp from order ord_e4 cost 45 EUR and flickers. My name is Zelda Quirinius, refund to DE89 3704 0044 0532 0130 00 please."
    expected: ESCALATE
  - id: K1
    label: "another customer"
    context:
      claim: { order_id: ord_k1, amount_eur: 30.0, category: home, customer_id: cus_karl, reason: "Toaster sparks. ${KARL}" }
    expected: { verdict: ACCEPT, reason_code: VALIDATION_PASSED }
  - id: K2
    label: "Karl claims on Zelda's order"
    context:
      claim: { order_id: ord_e1, amount_eur: 10.0, category: electronics, customer_id: cus_karl, reason: "Not mine but broken, Karl Keepmann here" }
    expected: REJECT
reviews:
  - id: Z2-approve
    label: "a person approves Z2"
    review: { of: Z2, decision: APPROVE, reviewer: demo-reviewer, note: "Agreed with Zelda Quirinius by phone" }
    expected: APPROVED
`;

/** Every file under `dir`, with its bytes. */
function files(dir: string): { path: string; bytes: Buffer }[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [{ path, bytes: readFileSync(path) }];
  });
}

/** The files of `dir` whose bytes hold `text` (as written, or JSON- or HTML-escaped). */
function holding(dir: string, text: string): string[] {
  const forms = [text, JSON.stringify(text).slice(1, -1), text.replaceAll("+", "&#43;").replaceAll("@", "&#64;")];
  return files(dir)
    .filter((f) => forms.some((form) => f.bytes.includes(Buffer.from(form, "utf8"))))
    .map((f) => f.path);
}

type BatchOutcome = Awaited<ReturnType<typeof runBatch>>;

async function recordRun(): Promise<{ dataDir: string; outcome: BatchOutcome; log: string }> {
  const dir = mkdtempSync(join(tmpdir(), "claims-erase-"));
  writeFileSync(join(dir, "config.yaml"), CONFIG);
  writeFileSync(join(dir, "scenarios.yaml"), SCENARIOS);
  const dataDir = join(dir, "data");
  let log = "";
  const outcome = await runBatch({
    scenariosPath: join(dir, "scenarios.yaml"),
    configPath: join(dir, "config.yaml"),
    clock: { now: () => NOW },
    dataDir,
    llm: (config) => ({
      port: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      description: "rules",
    }),
    runtime: async (opts) => createInProcessRuntime(opts),
    log: (text) => {
      log += `${text}\n`;
    },
    writeReport: (simulationId) => writeReportFor(dataDir, simulationId),
  });
  return { dataDir, outcome, log };
}

describe("a customer's erasure over the data directory", () => {
  it("leaves none of their words in any byte kept, every decision IDENTICAL on replay and the backtest unchanged", async () => {
    const { dataDir, outcome, log } = await recordRun();
    expect(outcome.allMatch).toBe(true);
    const sim = outcome.simulationId;
    // The audit on disk is sealed from the start; the logs never had the words; the report shows them until erased.
    const before = await loadRunAudit(dataDir, sim);
    for (const text of ZELDA) {
      expect(log).not.toContain(text);
      expect(holding(dataDir, text).map((p) => p.slice(dataDir.length))).toEqual([`/runs/${sim}/report.html`]);
    }
    expect(JSON.stringify(before)).toContain("Zelda Quirinius");
    const policy = policyOf(CONFIG);
    const backtestBefore = backtest({ histories: [{ id: sim, events: before }], policy });

    const result = await eraseInRuns(dataDir, { customerId: "cus_zelda" }, new Date(NOW + 86_400_000), (s) =>
      writeReportFor(dataDir, s),
    );
    // K2, Karl's claim on Zelda's order, holds the words of both: it is erased with hers.
    const zelda = outcome.rows.filter((r) => /^(Z\d|K2)$/.test(r.id)).map((r) => r.claim_id);
    expect(result.erased.sort()).toEqual([...zelda].sort());
    expect(result.already).toEqual([]);

    for (const text of ZELDA) expect(holding(dataDir, text)).toEqual([]);
    expect(holding(dataDir, KARL)).toEqual([`${dataDir}/runs/${sim}/report.html`]);

    const after = await loadRunAudit(dataDir, sim);
    expect(JSON.stringify(after)).not.toContain("Quirinius");
    expect(JSON.stringify(after)).toContain(KARL);
    const erasure = after.filter((e) => e.event_type === "PERSONAL_DATA_ERASED");
    expect(erasure).toHaveLength(1);
    expect(erasure[0]!.details).toMatchObject({ customer_id: "cus_zelda", cause: "request", simulation_id: sim });

    for (const row of outcome.rows) {
      const replay = replayClaim(row.claim_id, after);
      expect({
        id: row.id,
        status: replay.status,
        steps: replay.steps.filter((s) => s.status !== "IDENTICAL"),
      }).toEqual({
        id: row.id,
        status: "IDENTICAL",
        steps: [],
      });
      expect({ id: row.id, outcome: replay.outcome }).toEqual({
        id: row.id,
        outcome: replayClaim(row.claim_id, before).outcome,
      });
      expect(replay.erased !== undefined).toBe(zelda.includes(row.claim_id));
    }
    const backtestAfter = backtest({ histories: [{ id: sim, events: after }], policy });
    expect(backtestAfter.evaluated).toBe(backtestBefore.evaluated);
    expect(backtestAfter.flips).toEqual(backtestBefore.flips);
    expect(backtestAfter.totals).toEqual(backtestBefore.totals);
    expect(backtestAfter.evaluated).toBeGreaterThanOrEqual(4);

    // Twice, and a customer with no claims: clear answers, nothing written.
    const sealed = loadSealedRunAudit(dataDir, sim);
    const again = await eraseInRuns(dataDir, { customerId: "cus_zelda" }, new Date(NOW), async () => {});
    expect(again.erased).toEqual([]);
    expect(again.already.sort()).toEqual([...zelda].sort());
    expect((await eraseInRuns(dataDir, { customerId: "cus_nobody" }, new Date(NOW), async () => {})).runs).toEqual([]);
    expect(loadSealedRunAudit(dataDir, sim)).toEqual(sealed);
  });

  it("exports everything held about a customer, opened, and says what is erased", async () => {
    const { dataDir, outcome } = await recordRun();
    const karl = outcome.rows.find((r) => r.id === "K1")!.claim_id;
    const exported = await exportCustomer(dataDir, "cus_zelda", new Date(NOW));
    expect(exported.claims.map((c) => c.order_id).sort()).toEqual(["ord_e1", "ord_e1", "ord_e2", "ord_e3", "ord_e4"]);
    expect(exported.claims.every((c) => !c.erased)).toBe(true);
    const values = exported.claims.flatMap((c) => c.personal_data.map((p) => p.value));
    expect(values).toContain("Kettle leaks. Zelda Quirinius, zelda.quirinius@example.com, +49 171 9876543");
    expect(values).toContain("Agreed with Zelda Quirinius by phone");
    expect(values.some((v) => v.startsWith("My lamp from order ord_e4"))).toBe(true);
    expect(JSON.stringify(exported)).not.toContain("Toaster sparks");
    const karlsOwn = await exportCustomer(dataDir, "cus_karl", new Date(NOW));
    expect(karlsOwn.claims.map((c) => c.order_id).sort()).toEqual(["ord_e1", "ord_k1"]);
    expect(exported.claims.flatMap((c) => c.audit).some((e) => e.details.claim_id === karl)).toBe(false);

    await eraseInRuns(
      dataDir,
      { claimId: outcome.rows.find((r) => r.id === "Z1")!.claim_id },
      new Date(NOW),
      async () => {},
    );
    const later = await exportCustomer(dataDir, "cus_zelda", new Date(NOW));
    const z1 = later.claims.find((c) => c.claim_id === outcome.rows.find((r) => r.id === "Z1")!.claim_id)!;
    expect(z1.erased).toBe(true);
    expect(z1.personal_data.every((p) => p.value === ERASED)).toBe(true);
    expect(later.claims.filter((c) => c.erased)).toHaveLength(1);
  });

  it("erases, by the retention policy, every claim's words once older than its days, and only then", async () => {
    const { dataDir, outcome } = await recordRun();
    const sim = outcome.simulationId;
    const day = 86_400_000;
    const noop = async () => {};
    expect((await sweepRetention(dataDir, 30, new Date(NOW + 29 * day), noop)).erased).toEqual([]);
    expect(holding(dataDir, "Quirinius")).not.toEqual([]);
    const swept = await sweepRetention(dataDir, 30, new Date(NOW + 30 * day + 1), (s) => writeReportFor(dataDir, s));
    const claims = [...new Set(outcome.rows.map((r) => r.claim_id))];
    expect(swept.erased.sort()).toEqual(claims.sort());
    for (const text of [...ZELDA, KARL]) expect(holding(dataDir, text)).toEqual([]);
    const after = await loadRunAudit(dataDir, sim);
    const erasures = after.filter((e) => e.event_type === "PERSONAL_DATA_ERASED").map((e) => e.details);
    expect(erasures).toEqual([expect.objectContaining({ cause: "retention", retention_days: 30 })]);
    expect([...(erasures[0]!.claim_ids as string[])].sort()).toEqual(claims.sort());
    for (const id of claims) expect(replayClaim(id, after).status).toBe("IDENTICAL");
    expect((await sweepRetention(dataDir, 30, new Date(NOW + 60 * day), noop)).erased).toEqual([]);
  });

  it("erases from a run recorded before the audit was sealed (its words in clear, no keys), and seals the rest", async () => {
    const { dataDir, outcome } = await recordRun();
    const sim = outcome.simulationId;
    writeRunAudit(dataDir, sim, await loadRunAudit(dataDir, sim));
    rmSync(join(dataDir, "keys"), { recursive: true });
    expect(readFileSync(join(dataDir, "runs", sim, "audit.jsonl"), "utf8")).toContain("Zelda Quirinius");
    const result = await eraseInRuns(dataDir, { customerId: "cus_zelda" }, new Date(NOW), (s) =>
      writeReportFor(dataDir, s),
    );
    expect(result.erased).toHaveLength(5);
    for (const text of ZELDA) expect(holding(dataDir, text)).toEqual([]);
    expect(holding(dataDir, "Toaster sparks")).toEqual([`${dataDir}/runs/${sim}/report.html`]);
    const after = await loadRunAudit(dataDir, sim);
    expect(JSON.stringify(after)).toContain("Toaster sparks");
    for (const row of outcome.rows) expect(replayClaim(row.claim_id, after).status).toBe("IDENTICAL");
  });

  it("answers through the claims command: erased, already erased, unknown, a usage error; replay and export after", async () => {
    const { dataDir, outcome } = await recordRun();
    const z2 = outcome.rows.find((r) => r.id === "Z2")!.claim_id;
    const dd = ["--data-dir", dataDir];
    // `claims erase` and `claims export --out` as a user runs them (bin/claims.mjs); the other answers in this process.
    const first = await claims(["erase", "--customer", "cus_zelda", ...dd]);
    expect(first).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("customer cus_zelda: personal data of 5 claim(s) erased"),
    });
    expect(await claimsInProcess(["erase", "--customer", "cus_zelda", ...dd])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("already erased (5 claim(s))"),
    });
    expect(await claimsInProcess(["erase", "--customer", "cus_nobody", ...dd])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no claim of customer cus_nobody"),
    });
    const usage = await claimsInProcess(["erase", ...dd]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("give exactly one of --customer <id> or --claim <id>");
    expect(usage.stderr).not.toMatch(/\n\s+at /);
    const replay = await claimsInProcess(["replay", z2, ...dd]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain("personal data erased (claims erase), shown as [erased]");
    expect(replay.stdout).toMatch(/Identical: ACCEPT|Identical: ESCALATE/);
    const out = join(dataDir, "zelda.json");
    expect((await claims(["export", "--customer", "cus_zelda", "--out", out, ...dd])).code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const exported = JSON.parse(readFileSync(out, "utf8")) as { claims: { erased: boolean }[] };
    expect(exported.claims.map((c) => c.erased)).toEqual([true, true, true, true, true]);
    expect(readFileSync(out, "utf8")).not.toContain("Quirinius");
  }, 120_000); // two `claims` processes: generous under load (a deadline, not a timing assertion)
});

const root = new URL("..", import.meta.url).pathname;

/** Runs `claims …` as a user does: its exit code, stdout and stderr. */
async function claims(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(root, "bin/claims.mjs"), ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1" },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
