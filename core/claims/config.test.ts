import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.ts";
import { resolveDate } from "./relative-date.ts";
import { parseScenarios } from "./scenarios.ts";
import { SourceFileError } from "./yaml-source.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const configText = readFileSync(new URL("../../scenarios/config.yaml", import.meta.url), "utf8");
const scenariosText = readFileSync(new URL("../../scenarios/scenarios.yaml", import.meta.url), "utf8");

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    if (e instanceof SourceFileError) return e;
    throw e;
  }
  throw new Error("expected a SourceFileError");
}

describe("resolveDate", () => {
  it.each([
    ["-3d", "2026-05-29T12:00:00.000Z"],
    ["-36h", "2026-05-31T00:00:00.000Z"],
    ["+2d", "2026-06-03T12:00:00.000Z"],
    ["-90m", "2026-06-01T10:30:00.000Z"],
    ["2026-01-01", "2026-01-01T00:00:00.000Z"],
    ["2026-01-01T10:00:00", "2026-01-01T10:00:00.000Z"],
    ["2026-01-01T10:00:00+02:00", "2026-01-01T08:00:00.000Z"],
  ])("resolves %s against the run's clock", (input, expected) => {
    expect(resolveDate(input, NOW)).toBe(expected);
  });
  it.each(["yesterday", "3d", "-3w", "2026-13-45", ""])("refuses %j", (input) => {
    expect(resolveDate(input, NOW)).toBeUndefined();
  });
});

describe("parseConfig", () => {
  it("reads the bundled config with relative purchase dates resolved against the clock", () => {
    const config = parseConfig(configText, "scenarios/config.yaml", NOW);
    expect(config.simulationId).toBe("claims_batch_001");
    expect(config.agent.agentId).toBe("claims_agent_v1");
    expect(config.agent.contract).toEqual({ allowed_refund_categories: ["electronics", "clothing", "home"], max_refund_without_escalation: 500, return_window_days: 14 });
    expect(config.orders.find((o) => o.order_id === "ord_001")?.purchase_date).toBe("2026-05-29T12:00:00.000Z");
    expect(config.llm.provider).toBe("rules");
  });

  it("names the file, line, order and field of a bad order", () => {
    const bad = configText.replace("ord_007: { purchase_date: \"-4d\",  category: clothing,            amount: 80.00 }", "ord_007: { purchase_date: \"last week\", category: clothing, amount: -80 }");
    const err = issuesOf(() => parseConfig(bad, "scenarios/config.yaml", NOW));
    const fields = err.issues.map((i) => `${i.row} ${i.field}`);
    expect(fields).toContain("ord_007 context_store.orders.ord_007.purchase_date");
    expect(fields).toContain("ord_007 context_store.orders.ord_007.amount");
    expect(err.message).toMatch(/scenarios\/config\.yaml:\d+ row 'ord_007' context_store\.orders\.ord_007\.amount: amount must be a positive number/);
  });

  it("refuses unknown keys and a bad policy kind in an agent contract", () => {
    const bad = configText.replace("allowed_policy_types: [REFUND, REPLACE, ESCALATE]", "allowed_policy_types: [REFUND, WIRE_TRANSFER]").replace("llm_defaults:", "llm_defualts: {}\nllm_defaults:");
    const err = issuesOf(() => parseConfig(bad, "config.yaml", NOW));
    expect(err.issues.some((i) => i.row === "claims_agent_v1" && i.field === "agents[0].contract.allowed_policy_types[1]")).toBe(true);
    expect(err.issues.some((i) => /llm_defualts/.test(i.message))).toBe(true);
  });

  it("reports YAML syntax errors with their line", () => {
    const err = issuesOf(() => parseConfig("simulation:\n  run_id: [x\nagents: 1\n", "c.yaml", NOW));
    expect(err.issues[0]?.line).toBeGreaterThan(1);
    expect(err.message).toContain("c.yaml:");
  });
});

describe("parseScenarios", () => {
  it("reads the bundled scenarios: the seed's A–F and our own", () => {
    const scenarios = parseScenarios(scenariosText, "scenarios/scenarios.yaml");
    expect(scenarios.map((s) => s.id).slice(0, 6)).toEqual(["A", "B", "C", "D", "E", "F"]);
    expect(scenarios.length).toBeGreaterThanOrEqual(14);
    expect(scenarios[0]).toMatchObject({ id: "A", expected: { verdict: "ACCEPT" }, input: { claim: { order_id: "ord_001", amount_eur: 299.99 } } });
    expect(scenarios.find((s) => s.id === "E")?.input).toHaveProperty("claim_text");
  });

  it("names the row and field of a bad scenario", () => {
    const bad = scenariosText.replace("amount_eur: 1200.0, category: electronics, reason: \"Laptop does not boot\"", "amount_eur: \"1200\", category: electronics, reason: \"Laptop does not boot\"");
    const err = issuesOf(() => parseScenarios(bad, "scenarios.yaml"));
    expect(err.issues[0]).toMatchObject({ file: "scenarios.yaml", row: "B" });
    expect(err.issues[0]?.field).toMatch(/^scenarios\[1\]\.context/);
    expect(err.issues[0]?.line).toBeGreaterThan(10);
  });

  it.each([
    ["an unknown expected verdict", (t: string) => t.replace("expected: { verdict: REJECT, reason_code: CATEGORY_NOT_ALLOWED }", "expected: MAYBE"), "D", /expected/],
    ["a duplicate id", (t: string) => t.replace("- id: B\n", "- id: A\n"), "A", /duplicate id/],
    ["a row with both claim and claim_text", (t: string) => t.replace("claim_text: \"Hi, the sofa", "claim: { order_id: x, amount_eur: 1, category: home }\n      claim_text: \"Hi, the sofa"), "R", /context/],
  ])("refuses %s", (_name, mutate, row, pattern) => {
    const err = issuesOf(() => parseScenarios(mutate(scenariosText), "s.yaml"));
    expect(err.issues.some((i) => i.row === row && (pattern.test(i.field) || pattern.test(i.message)))).toBe(true);
  });
});
