// runBatch's gate (docs/config.md): a scenario matches only when the verdict AND the expected reason code
// (when the scenario gives one) match. Run in process with the rules model and the bundled config.
import { getEventListeners } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulationEndDetailsSchema } from "../core/history/audit-events.ts";
import { frozenClock } from "../core/crew/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInProcessRuntime } from "../local/runtime.ts";
import { INTERRUPTED, raceInterruption, runBatch } from "./batch.ts";
import { loadRunAudit } from "./run-store.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { renderReport } from "../report/render.ts";

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
/** 300 of the 1200 EUR ord_016, refunded automatically: 900 EUR left on the order. */
const PARTLY = '{ order_id: ord_016, amount_eur: 300.0, category: electronics, reason: "Camera body scratched" }';

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

  it("rehearses the provider's decline of a run's refund (a payment step), a CLOSE paid out of band, and the claim after it goes to a person", async () => {
    const { outcome, log, dataDir } = await batch(
      `scenarios:\n${row("paid", PARTLY, "ACCEPT")}${row("big", ESCALATED, "ESCALATE")}reviews:\n` +
        '  - id: declined\n    label: "declined"\n    payment: { of: paid, declined: card_declined }\n    expected: FAILED\n' +
        '  - id: nothing\n    label: "nothing"\n    payment: { of: big, declined: card_declined }\n    expected: { outcome: REFUSED, reason_code: NOT_EXECUTED }\n' +
        '  - id: closed\n    label: "closed"\n    review: { of: paid, decision: CLOSE, paid_out_of_band: true, reviewer: rita, note: "Bank transfer" }\n    expected: CLOSED\n' +
        "after_reviews:\n" +
        row(
          "again",
          '{ order_id: ord_016, amount_eur: 100.0, category: electronics, reason: "Strap broke" }',
          "{ verdict: ESCALATE, reason_code: PRIOR_DECISION_ON_ORDER }",
        ),
    );
    expect(outcome.rows.map((r) => [r.id, r.verdict, r.reason_code, r.matches])).toEqual([
      ["paid", "ACCEPT", "VALIDATION_PASSED", true],
      ["big", "ESCALATE", "AMOUNT_ABOVE_LIMIT", true],
      ["declined", "FAILED", null, true],
      ["nothing", "REFUSED", "NOT_EXECUTED", true],
      ["closed", "CLOSED", null, true],
      ["again", "ESCALATE", "PRIOR_DECISION_ON_ORDER", true],
    ]);
    expect(outcome.rows[2]).toMatchObject({
      reason: "card_declined (simulated)",
      order_id: "ord_016",
      amount_eur: 300,
    });
    expect(log).toContain("payment of paid (");
    // The run's audit holds the decline and the CLOSE under the settlement's own flow; the claim's replays identical.
    const events = await loadRunAudit(dataDir, outcome.simulationId);
    const paid = outcome.rows[0]!.claim_id;
    expect(events.filter((e) => e.dfid === `dfid_pay_${paid}`).map((e) => e.event_type)).toEqual([
      "REFUND_FAILED",
      "REVIEW_DECIDED",
    ]);
    expect(replayClaim(paid, events).status).toBe("IDENTICAL");
    expect(replayClaim(outcome.rows[5]!.claim_id, events).status).toBe("IDENTICAL");
    // The report shows the refund's fate on the claim's cycle (its review of the claim stays "not needed").
    const page = renderReport(events);
    const from = page.search(new RegExp(`<details class="cycle" id="[^"]*" data-claim-id="${paid}">`));
    expect(from).toBeGreaterThan(0);
    const cycle = page.slice(from, page.indexOf('<details class="cycle"', from + 1));
    expect(cycle).toMatch(
      /data-payment="FAILED"><span class="fail">✗ payment failed<\/span>: card_declined \(simulated\) <span class="tag">simulated<\/span><\/p><p data-payment-decision="CLOSE"><strong>CLOSE<\/strong> by rita: paid out of band, counted as refunded — Bank transfer<\/p>/,
    );
  });

  it("a RETRY of a rehearsed decline is a simulation's refund again: the next payment step answers the retry", async () => {
    const { outcome, dataDir } = await batch(
      `scenarios:\n${row("paid", ACCEPTED, "ACCEPT")}reviews:\n` +
        '  - id: declined\n    label: "declined"\n    payment: { of: paid, declined: expired_card }\n    expected: FAILED\n' +
        '  - id: retried\n    label: "retried"\n    review: { of: paid, decision: RETRY, reviewer: rita }\n    expected: RETRIED\n' +
        '  - id: again\n    label: "again"\n    payment: { of: paid, declined: expired_card }\n    expected: FAILED\n',
    );
    expect(outcome.rows.map((r) => [r.id, r.verdict, r.matches])).toEqual([
      ["paid", "ACCEPT", true],
      ["declined", "FAILED", true],
      ["retried", "RETRIED", true],
      ["again", "FAILED", true],
    ]);
    // The retry's RefundExecuted names the run, so no payment provider is ever given it.
    const retry = (await loadRunAudit(dataDir, outcome.simulationId)).find(
      (e) => e.event_type === "CLAIM_REFUND_EXECUTED" && e.details.retry_of !== undefined,
    );
    expect(retry?.details.simulation_id).toBe(outcome.simulationId);
  });
});

describe("waiting on a row while the run may be interrupted", () => {
  it("leaves no abort listener behind after each row, however many rows run (no MaxListenersExceededWarning)", async () => {
    const controller = new AbortController();
    for (let row = 0; row < 60; row++)
      expect(await raceInterruption(Promise.resolve(row), controller.signal)).toBe(row);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("answers INTERRUPTED when the run is interrupted during the wait, or was before it", async () => {
    const controller = new AbortController();
    const waiting = raceInterruption(new Promise<never>(() => {}), controller.signal);
    controller.abort();
    expect(await waiting).toBe(INTERRUPTED);
    expect(await raceInterruption(Promise.resolve(1), controller.signal)).toBe(INTERRUPTED);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
