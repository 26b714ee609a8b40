// claims batch's return steps (docs/config.md, docs/returns.md): a return event posted for a scenario's claim, the
// sweep's pass at a later instant, and a scenario's `executed` expectation. Run in process with the rules model and
// the bundled config, whose sports gear is refunded once it is delivered back (keep_item_below 30 EUR).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { frozenClock } from "../core/crew/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInProcessRuntime } from "../local/runtime.ts";
import { runBatch } from "./batch.ts";
import { loadRunAudit } from "./run-store.ts";
import { replayClaim } from "../core/history/replay/index.ts";

const CONFIG = new URL("../scenarios/config.yaml", import.meta.url).pathname;
const NOW = Date.parse("2026-06-01T12:00:00Z");
const DAY = 86_400_000;

async function batch(scenariosYaml: string) {
  const dataDir = mkdtempSync(join(tmpdir(), "claims-batch-returns-"));
  const scenariosPath = join(dataDir, "scenarios.yaml");
  writeFileSync(scenariosPath, scenariosYaml);
  const log: string[] = [];
  const outcome = await runBatch({
    scenariosPath,
    configPath: CONFIG,
    clock: frozenClock(NOW),
    dataDir,
    llm: (config) => ({
      port: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      description: "rules",
    }),
    runtime: async (opts) => createInProcessRuntime(opts),
    log: (text) => void log.push(text),
  });
  return { outcome, log: log.join("\n"), events: await loadRunAudit(dataDir, outcome.simulationId) };
}

const row = (id: string, order: string, amount: number, expected: string) =>
  `  - id: ${id}\n    label: "${id}"\n    context:\n      claim: { order_id: ${order}, amount_eur: ${amount}, category: sports, reason: "Broken" }\n    expected: ${expected}\n`;
const step = (id: string, body: string, expected: string, at?: string) =>
  `  - id: ${id}\n    label: "${id}"\n${at ? `    at: "${at}"\n` : ""}    ${body}\n    expected: ${expected}\n`;

describe("claims batch: return steps", () => {
  it("pays a return on its delivery once, sends a failed inspection to a person, and ends a return never shipped at its deadline", async () => {
    const { outcome, log, events } = await batch(
      "scenarios:\n" +
        row("back", "ord_050", 280, "{ verdict: ACCEPT, executed: false }") +
        row("keep", "ord_051", 25, "{ verdict: ACCEPT, executed: true }") +
        row("never", "ord_052", 150, "{ verdict: ACCEPT, executed: false }") +
        row("failed", "ord_053", 420, "{ verdict: ACCEPT, executed: false }") +
        "reviews:\n" +
        step("shipped", "return_event: { of: back, event: in_transit }", "WAIT", "+1d") +
        step("delivered", "return_event: { of: back, event: delivered }", "PAY", "+3d") +
        step("again", "return_event: { of: back, event: delivered, event_id: delivered }", "RECORDED") +
        step(
          "kept",
          "return_event: { of: keep, event: delivered }",
          "{ outcome: REFUSED, reason_code: NOT_AWAITING_RETURN }",
        ) +
        step("inspected", "return_event: { of: failed, event: inspected_failed }", "REVIEW", "+4d") +
        step("deny", 'review: { of: failed, decision: DENY, reviewer: rita, note: "Misuse" }', "DENIED") +
        step("early", "sweep: { of: never }", "WAIT", "+29d") +
        step("due", "sweep: { of: never }", "NOT_RECEIVED", "+31d"),
    );
    expect(
      outcome.rows.map((r) => [r.id, r.verdict, r.executed, r.matches]),
      JSON.stringify(outcome.rows.map((r) => r.reason)),
    ).toEqual([
      ["back", "ACCEPT", false, true],
      ["keep", "ACCEPT", true, true],
      ["never", "ACCEPT", false, true],
      ["failed", "ACCEPT", false, true],
      ["shipped", "WAIT", false, true],
      ["delivered", "PAY", true, true],
      ["again", "RECORDED", false, true],
      ["kept", "REFUSED", false, true],
      ["inspected", "REVIEW", false, true],
      ["deny", "DENIED", false, true],
      ["early", "WAIT", false, true],
      ["due", "NOT_RECEIVED", false, true],
    ]);
    expect(outcome.allMatch).toBe(true);
    expect(log).toContain(`at ${new Date(NOW + 3 * DAY).toISOString()}`);
    // A claim that waits for its item says so on its row; one paid at once does not.
    const rowOf = (id: string) => log.slice(log.indexOf(`] ${id} — `), log.indexOf("\n\n", log.indexOf(`] ${id} — `)));
    expect(rowOf("back")).toContain(
      `Return   : the refund waits for the item to come back (1 unit): pays on delivered, shipped by ${new Date(NOW + 30 * DAY).toISOString()}`,
    );
    expect(rowOf("keep")).not.toContain("Return   :");
    const claimOf = (id: string) => outcome.rows.find((r) => r.id === id)!.claim_id;
    // The events are recorded at the steps' instants; the refund of `back` is announced once, after its delivery.
    const recorded = events.filter(
      (e) => e.event_type === "RETURN_EVENT_RECORDED" && e.dfid === `dfid_ret_${claimOf("back")}`,
    );
    expect(recorded.map((e) => [e.created_at, (e.details as { event_id: string }).event_id])).toEqual([
      [new Date(NOW + DAY).toISOString(), "shipped"],
      [new Date(NOW + 3 * DAY).toISOString(), "delivered"],
    ]);
    const completed = events.filter((e) => e.event_type === "RETURN_COMPLETED");
    expect(completed.map((e) => [e.dfid, (e.details as { outcome: string }).outcome, e.created_at])).toEqual([
      [`dfid_ret_${claimOf("back")}`, "PAID", new Date(NOW + 3 * DAY).toISOString()],
      [`dfid_ret_${claimOf("failed")}`, "REVIEW", new Date(NOW + 4 * DAY).toISOString()],
      [`dfid_ret_${claimOf("never")}`, "NOT_RECEIVED", new Date(NOW + 31 * DAY).toISOString()],
    ]);
    // Every claim replays identical, its return outcomes decided again alike.
    for (const id of ["back", "keep", "never", "failed"])
      expect(replayClaim(claimOf(id), events).status).toBe("IDENTICAL");
  });

  it("does not match a row whose refund was expected at once when the claim waits for its return", async () => {
    const { outcome } = await batch(
      `scenarios:\n${row("back", "ord_050", 280, "{ verdict: ACCEPT, executed: true }")}`,
    );
    expect(outcome.rows.map((r) => [r.verdict, r.executed, r.matches])).toEqual([["ACCEPT", false, false]]);
    expect(outcome.allMatch).toBe(false);
  });
});
