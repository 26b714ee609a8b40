// runBatch's gate (docs/config.md): a scenario matches only when the verdict AND the expected reason code
// (when the scenario gives one) match. Run in process with the rules model and the bundled config.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulationEndDetailsSchema } from "../core/history/audit-events.ts";
import { frozenClock } from "../core/crew/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInProcessRuntime } from "../local/runtime.ts";
import { runBatch } from "./batch.ts";
import { loadRunAudit } from "./run-store.ts";

const CONFIG = new URL("../scenarios/config.yaml", import.meta.url).pathname;

async function batch(scenariosYaml: string, configPath = CONFIG) {
  const dataDir = mkdtempSync(join(tmpdir(), "claims-batch-"));
  const scenariosPath = join(dataDir, "scenarios.yaml");
  writeFileSync(scenariosPath, scenariosYaml);
  const log: string[] = [];
  const outcome = await runBatch({
    scenariosPath,
    configPath,
    clock: frozenClock(Date.parse("2026-06-01T12:00:00Z")),
    dataDir,
    llm: (config) => ({
      port: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      description: "rules",
    }),
    runtime: async (opts) => createInProcessRuntime(opts),
    log: (text) => void log.push(text),
  });
  return { outcome, log: log.join("\n"), dataDir };
}

const row = (id: string, claim: string, expected: string) =>
  `  - id: ${id}\n    label: "${id}"\n    context:\n      claim: ${claim}\n    expected: ${expected}\n`;
const ACCEPTED = '{ order_id: ord_001, amount_eur: 299.99, category: electronics, reason: "Screen is dead" }';
const ESCALATED_TOO = '{ order_id: ord_011, amount_eur: 500.01, category: electronics, reason: "Cracked" }';
const ESCALATED = '{ order_id: ord_002, amount_eur: 1200.0, category: electronics, reason: "Does not boot" }';

describe("runBatch", () => {
  it("reports a mismatch when the verdict matches but the reason code does not", async () => {
    const { outcome, dataDir } = await batch(
      "scenarios:\n" +
        row("right", ACCEPTED, "{ verdict: ACCEPT, reason_code: VALIDATION_PASSED }") +
        row("wrong_reason", ESCALATED_TOO, "{ verdict: ESCALATE, reason_code: LOW_CONFIDENCE }") +
        row("verdict_only", ESCALATED, "ESCALATE"),
    );
    expect(
      outcome.rows.map((r) => ({ id: r.id, verdict: r.verdict, reason_code: r.reason_code, matches: r.matches })),
    ).toEqual([
      { id: "right", verdict: "ACCEPT", reason_code: "VALIDATION_PASSED", matches: true },
      { id: "wrong_reason", verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT", matches: false },
      { id: "verdict_only", verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT", matches: true },
    ]);
    expect(outcome.allMatch).toBe(false);
    const end = (await loadRunAudit(dataDir, outcome.simulationId)).find((e) => e.event_type === "SIMULATION_END")!;
    const details = SimulationEndDetailsSchema.parse(end.details);
    expect(details).toMatchObject({ total: 3, matched: 2 });
    // The clock is frozen (a batch decides as of one instant); the run still ends its wall duration after it started.
    expect(details.duration_ms).toBeGreaterThan(0);
    expect(Date.parse(details.ended_at) - Date.parse("2026-06-01T12:00:00Z")).toBe(details.duration_ms);
    expect(details.results[1]).toMatchObject({
      id: "wrong_reason",
      verdict: "ESCALATE",
      expected: "ESCALATE",
      expected_reason_code: "LOW_CONFIDENCE",
      reason_code: "AMOUNT_ABOVE_LIMIT",
      matches: false,
    });
  });

  it("reports all matched when every verdict and every given reason code match", async () => {
    const { outcome } = await batch(
      "scenarios:\n" +
        row("right", ACCEPTED, "{ verdict: ACCEPT, reason_code: VALIDATION_PASSED }") +
        row("verdict_only", ESCALATED, "ESCALATE"),
    );
    expect(outcome.rows.map((r) => r.matches)).toEqual([true, true]);
    expect(outcome.allMatch).toBe(true);
  });

  it("shows a four-eyes approval: the simulated first reviewer's approval awaits, a different one's completes it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "claims-batch-4eyes-"));
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      // The bundled bound (1500 EUR) lowered to 1000, so this 1200 EUR approval needs a second person.
      readFileSync(CONFIG, "utf8").replace("second_approval_above_eur: 1500.0", "second_approval_above_eur: 1000.0"),
    );
    const step = (id: string, body: string, expected: string) =>
      `  - id: ${id}\n    label: "${id}"\n    review: { of: big, decision: APPROVE, ${body} }\n    expected: ${expected}\n`;
    const { outcome } = await batch(
      `scenarios:\n${row("big", ESCALATED, "ESCALATE")}reviews:\n` +
        step("first", "reviewer: rita", "AWAITING_SECOND_APPROVAL") +
        step("again", "reviewer: rita", "{ outcome: REFUSED, reason_code: SAME_REVIEWER }") +
        step("second", "reviewer: sam", "APPROVED"),
      config,
    );
    expect(outcome.rows.map((r) => [r.id, r.verdict, r.matches, r.executed])).toEqual([
      ["big", "ESCALATE", true, false],
      ["first", "AWAITING_SECOND_APPROVAL", true, false],
      ["again", "REFUSED", true, false],
      ["second", "APPROVED", true, true],
    ]);
    expect(outcome.allMatch).toBe(true);
  });

  it("gives a step's reviewer their own limit (reviewer_max_approval): above it the approval waits, a reviewer it covers completes it", async () => {
    const step = (id: string, body: string, extra: string, expected: string) =>
      `  - id: ${id}\n    label: "${id}"\n    review: { of: big, decision: APPROVE, ${body} }\n${extra}    expected: ${expected}\n`;
    const { outcome } = await batch(
      `scenarios:\n${row("big", ESCALATED, "ESCALATE")}reviews:\n` +
        step("junior", "reviewer: jo", "    reviewer_max_approval: 200.0\n", "AWAITING_SECOND_APPROVAL") +
        step(
          "mid",
          "reviewer: mo",
          "    reviewer_max_approval: 1199.99\n",
          "{ outcome: REFUSED, reason_code: APPROVAL_LIMIT }",
        ) +
        step("covered", "reviewer: cy", "    reviewer_max_approval: 1200.0\n", "APPROVED"),
    );
    expect(outcome.rows.map((r) => [r.id, r.verdict, r.matches, r.executed])).toEqual([
      ["big", "ESCALATE", true, false],
      ["junior", "AWAITING_SECOND_APPROVAL", true, false],
      ["mid", "REFUSED", true, false],
      ["covered", "APPROVED", true, true],
    ]);
    // Without the limit the same junior approval of 1200 EUR (under the bundled 1500 EUR bound) completes alone.
    const alone = await batch(
      `scenarios:\n${row("big", ESCALATED, "ESCALATE")}reviews:\n` + step("jo", "reviewer: jo", "", "APPROVED"),
    );
    expect(alone.outcome.allMatch).toBe(true);
  });
});
