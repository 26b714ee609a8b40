import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { agentHandshake, parseConfig } from "./config.ts";
import { resolveDate } from "./relative-date.ts";
import { parseScenarios } from "../history/scenarios.ts";
import { SourceFileError } from "./errors.ts";

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
    expect(config.agent.contract).toEqual({
      allowed_refund_categories: ["electronics", "clothing", "home", "sports"],
      max_refund_without_escalation: 500,
      return_window_days: { default: 14, clothing: 30 },
      customer_limits: { window_days: 30, max_automatic_refunds: 2, max_automatic_eur: 500 },
      currencies: {
        USD: { max_refund_without_escalation: 600, second_approval_above: 1600 },
        JPY: { max_refund_without_escalation: 80000, second_approval_above: 240000 },
      },
      returns: {
        pay_on: "delivered",
        return_deadline_days: 30,
        refund_due_days: 14,
        categories: { sports: { return_required: true, keep_item_below: { EUR: 30 } } },
      },
      outcomes: {
        outcome: "REFUND",
        categories: { home: { allows: ["STORE_CREDIT", "EXCHANGE"], store_credit_bonus_pct: 10 } },
      },
    });
    expect(config.orders.find((o) => o.order_id === "ord_001")?.purchase_date).toBe("2026-05-29T12:00:00.000Z");
    expect(config.llm.provider).toBe("rules");
  });

  it("reads an optional shadow policy in the agents' format, and none when the key is absent", () => {
    expect(parseConfig(configText, "config.yaml", NOW).agent.shadow).toBeUndefined();
    const shadow = [
      "shadow_policy:",
      "  agents:",
      '    - agent_id: "claims_agent_v1"',
      "      contract: { role: EXECUTOR, allowed_policy_types: [REFUND, ESCALATE], authorized_categories: [home] }",
      "      claims_bounds: { max_refund_without_escalation: 100, return_window_days: 7 }",
      "",
    ].join("\n");
    const config = parseConfig(configText.replace("context_store:", `${shadow}context_store:`), "config.yaml", NOW);
    expect(config.agent.contract.max_refund_without_escalation).toBe(500);
    expect(config.agent.shadow).toMatchObject({
      agentId: "claims_agent_v1",
      version: "1.0.0",
      contract: { allowed_refund_categories: ["home"], max_refund_without_escalation: 100, return_window_days: 7 },
      responsibility: { allowed_policy_types: ["REFUND", "ESCALATE"] },
    });
    const bad = configText.replace("context_store:", "shadow_policy:\n  agents: []\ncontext_store:");
    expect(issuesOf(() => parseConfig(bad, "config.yaml", NOW)).message).toMatch(/shadow_policy\.agents/);
  });

  it("names the file, line, order and field of a bad order", () => {
    const bad = configText.replace(
      'ord_007: { purchase_date: "-4d",  category: clothing,            amount: 80.00 }',
      'ord_007: { purchase_date: "last week", category: clothing, amount: -80 }',
    );
    const err = issuesOf(() => parseConfig(bad, "scenarios/config.yaml", NOW));
    const fields = err.issues.map((i) => `${i.row} ${i.field}`);
    expect(fields).toContain("ord_007 context_store.orders.ord_007.purchase_date");
    expect(fields).toContain("ord_007 context_store.orders.ord_007.amount");
    expect(err.message).toMatch(
      /scenarios\/config\.yaml:\d+ row 'ord_007' context_store\.orders\.ord_007\.amount: amount must be a positive number/,
    );
  });

  it("refuses unknown keys and a bad policy kind in an agent contract", () => {
    const bad = configText
      .replace("allowed_policy_types: [REFUND, REPLACE, ESCALATE]", "allowed_policy_types: [REFUND, WIRE_TRANSFER]")
      .replace("llm_defaults:", "llm_defualts: {}\nllm_defaults:");
    const err = issuesOf(() => parseConfig(bad, "config.yaml", NOW));
    expect(
      err.issues.some((i) => i.row === "claims_agent_v1" && i.field === "agents[0].contract.allowed_policy_types[1]"),
    ).toBe(true);
    expect(err.issues.some((i) => /llm_defualts/.test(i.message))).toBe(true);
  });

  it("reads how long a review may wait, in days or in hours, never both", () => {
    const withDue = (line: string) =>
      parseConfig(configText.replace("review_due_hours: 24", line), "config.yaml", NOW).agent.review;
    expect(withDue("review_due_hours: 24")).toEqual({ secondApprovalAboveEur: 1500, dueMs: 86_400_000 });
    expect(withDue("review_due_days: 3")).toEqual({ secondApprovalAboveEur: 1500, dueMs: 3 * 86_400_000 });
    expect(withDue("review_due_hours: 1.5")?.dueMs).toBe(5_400_000);
    expect(withDue("# no due")).toEqual({ secondApprovalAboveEur: 1500 });
    const both = issuesOf(() => withDue("review_due_hours: 24\n      review_due_days: 1"));
    expect(both.message).toMatch(/review_due_hours: give how long a review may wait once/);
    expect(issuesOf(() => withDue("review_due_hours: 0")).message).toMatch(
      /review_due_hours must be a positive number of hours/,
    );
  });

  it("reads how long the customer's words are kept, and refuses a retention that is not whole days from 1", () => {
    const withRetention = (value: string) =>
      parseConfig(`${configText.trimEnd()}\nretention:\n  customer_text_days: ${value}\n`, "config.yaml", NOW);
    expect(parseConfig(configText, "config.yaml", NOW).retention).toBeUndefined();
    expect(withRetention("365").retention).toEqual({ customerTextDays: 365 });
    expect(issuesOf(() => withRetention("0")).message).toMatch(/customer_text_days must be at least 1 day/);
    expect(issuesOf(() => withRetention("-5")).message).toMatch(/customer_text_days must be at least 1 day/);
    expect(issuesOf(() => withRetention("1.5")).message).toMatch(/customer_text_days must be a whole number of days/);
    expect(issuesOf(() => withRetention("forever")).message).toMatch(/customer_text_days must be a number of days/);
    expect(issuesOf(() => withRetention("99999")).message).toMatch(/at most 36500 days/);
  });

  it("reads the agent's crew shape, none when the key is absent, and refuses another", () => {
    const withShape = (line: string) =>
      parseConfig(configText.replace("    claims_bounds:", `    ${line}\n    claims_bounds:`), "config.yaml", NOW)
        .agent;
    expect(parseConfig(configText, "config.yaml", NOW).agent.crewShape).toBeUndefined();
    expect(withShape("crew_shape: two_agents").crewShape).toBe("two_agents");
    expect(withShape("crew_shape: compact").crewShape).toBe("compact");
    expect(issuesOf(() => withShape("crew_shape: one_agent")).message).toMatch(
      /crew_shape must be one of: compact, two_agents/,
    );
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
    expect(scenarios[0]).toMatchObject({
      id: "A",
      expected: { verdict: "ACCEPT" },
      input: { claim: { order_id: "ord_001", amount_eur: 299.99 } },
    });
    expect(scenarios.find((s) => s.id === "E")?.input).toHaveProperty("claim_text");
  });

  it("names the row and field of a bad scenario", () => {
    const bad = scenariosText.replace(
      'amount_eur: 1200.0, category: electronics, reason: "Laptop does not boot"',
      'amount_eur: "1200", category: electronics, reason: "Laptop does not boot"',
    );
    const err = issuesOf(() => parseScenarios(bad, "scenarios.yaml"));
    expect(err.issues[0]).toMatchObject({ file: "scenarios.yaml", row: "B" });
    expect(err.issues[0]?.field).toMatch(/^scenarios\[1\]\.context/);
    expect(err.issues[0]?.line).toBeGreaterThan(10);
  });

  it.each([
    [
      "an unknown expected verdict",
      (t: string) => t.replace("expected: { verdict: REJECT, reason_code: CATEGORY_NOT_ALLOWED }", "expected: MAYBE"),
      "D",
      /expected/,
    ],
    ["a duplicate id", (t: string) => t.replace("- id: B\n", "- id: A\n"), "A", /duplicate id/],
    [
      "a row with both claim and claim_text",
      (t: string) =>
        t.replace(
          'claim_text: "Hi, the sofa',
          'claim: { order_id: x, amount_eur: 1, category: home }\n      claim_text: "Hi, the sofa',
        ),
      "R",
      /context/,
    ],
  ])("refuses %s", (_name, mutate, row, pattern) => {
    const err = issuesOf(() => parseScenarios(mutate(scenariosText), "s.yaml"));
    expect(err.issues.some((i) => i.row === row && (pattern.test(i.field) || pattern.test(i.message)))).toBe(true);
  });
});

// DIR sample 35's two formats, read from fixtures of our own (scenarios/fixtures/) that use every key those files use.
const fixture = (name: string) => readFileSync(new URL(`../../scenarios/fixtures/${name}`, import.meta.url), "utf8");
const seedEraText = fixture("dir-seed-era.config.yaml");
const roaText = fixture("roa-dir-v1.config.yaml");
const lineOfText = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;
/** The same file with its agent entry repeated under another id (so per-agent keys occur twice). */
function withSecondAgent(text: string): string {
  const agent = text.slice(text.indexOf("  - agent_id:"), text.indexOf("\ncontext_store:"));
  const second = agent
    .replace(/agent_id: "\w+"/, 'agent_id: "second_agent"')
    .replace(/agent_id: \w+\n/, "agent_id: second_agent\n");
  return text.replace("\ncontext_store:", `\n${second}\ncontext_store:`);
}

describe("parseConfig with DIR sample 35's formats", () => {
  it("reads the seed-era flat contract: authorized_instruments are the agent's and the refundable categories, version 1.0.0", () => {
    const config = parseConfig(seedEraText, "seed-era.yaml", NOW);
    expect(config.agent).toEqual({
      agentId: "returns_agent_v1",
      version: "1.0.0",
      responsibility: {
        agent_id: "returns_agent_v1",
        role: "EXECUTOR",
        mission:
          "Handle garden, toy and book returns within the shop's return policy, and ask a person when a refund is large.",
        allowed_policy_types: ["REFUND", "ESCALATE"],
        escalate_on_uncertainty: 0.65,
        authorized_categories: ["garden", "toys", "books"],
      },
      contract: {
        allowed_refund_categories: ["garden", "toys", "books"],
        max_refund_without_escalation: 200,
        return_window_days: 30,
      },
    });
    expect(config.reading.format).toBe("dir-seed-era");
    expect(config.simulationId).toBe("fixture_seed_era_001");
    expect(config.llm).toMatchObject({
      model: "fixture-model:1b",
      base_url: "http://localhost:11434",
      temperature: 0.1,
    });
  });

  it("reads the roa.dir/v1 contract document: subject, authority, resource scope and the escalation threshold", () => {
    const config = parseConfig(roaText, "roa.yaml", NOW);
    expect(config.agent.responsibility).toEqual({
      agent_id: "kitchen_agent_v2",
      role: "EXECUTOR",
      mission: "Refund kitchen and sports goods that fail early, within the bounds below.",
      allowed_policy_types: ["REFUND", "REPLACE", "ESCALATE"],
      escalate_on_uncertainty: 0.8,
      authorized_categories: ["kitchen", "sports"],
    });
    expect(config.agent.contract).toEqual({
      allowed_refund_categories: ["kitchen", "sports"],
      max_refund_without_escalation: 350,
      return_window_days: 21,
    });
    expect(config.agent.version).toBe("1.0.0");
    expect(config.reading.format).toBe("roa.dir/v1");
  });

  it.each([
    [
      "seed-era",
      seedEraText,
      [
        "database",
        "simulation.seeds",
        "agents[].priority",
        "agents[].crew",
        "agents[].contract.max_drawdown_limit",
        "agents[].contract.wake_up_threshold_pct",
        "agents[].contract.parent_agent_id",
      ],
    ],
    [
      "roa.dir/v1",
      roaText,
      [
        "database",
        "simulation.seeds",
        "agents[].priority",
        "agents[].crew",
        "agents[].contract.subject.parent_agent_id",
        "agents[].contract.execution_conditions",
      ],
    ],
  ])("lists each key only the sample's runtime reads once, with why (%s)", (_name, text, paths) => {
    const { reading } = parseConfig(withSecondAgent(text), "c.yaml", NOW);
    expect(reading.ignored.map((f) => f.path)).toEqual(paths);
    expect(reading.ignored.every((f) => f.why.length > 10)).toBe(true);
    expect(reading.mappings).toContain("agents[0].version missing: 1.0.0 assumed");
    expect(reading.mappings.some((m) => m.startsWith("2 agents"))).toBe(true);
  });

  it("reads offset-less purchase dates as UTC", () => {
    const orders = Object.fromEntries(
      parseConfig(seedEraText, "c.yaml", NOW).orders.map((o) => [o.order_id, o.purchase_date]),
    );
    expect(orders).toMatchObject({
      ord_101: "2026-03-05T09:30:00.000Z",
      ord_103: "2026-01-15T00:00:00.000Z",
      ord_104: "2026-03-12T09:00:00.000Z",
      ord_105: "2026-03-14T12:00:00.000Z",
    });
  });

  it("prefers claims_bounds.allowed_refund_categories and a given version over the fallbacks", () => {
    const text = seedEraText
      .replace("    claims_bounds:\n", "    claims_bounds:\n      allowed_refund_categories: [garden]\n")
      .replace('  - agent_id: "returns_agent_v1"\n', '  - agent_id: "returns_agent_v1"\n    version: "1.4.2"\n');
    const config = parseConfig(text, "c.yaml", NOW);
    expect(config.agent.contract.allowed_refund_categories).toEqual(["garden"]);
    expect(config.agent.responsibility.authorized_categories).toEqual(["garden", "toys", "books"]);
    expect(config.agent.version).toBe("1.4.2");
    expect(config.reading.mappings.join("\n")).not.toMatch(/version|allowed_refund_categories/);
  });

  it("reports a misspelt key at its own line with the key it probably meant, and nothing else for it", () => {
    const text = roaText.replace("max_refund_without_escalation:", "max_refund_without_escallation:");
    const err = issuesOf(() => parseConfig(text, "c.yaml", NOW));
    expect(err.issues).toEqual([
      {
        file: "c.yaml",
        line: lineOfText(text, "max_refund_without_escallation"),
        row: "kitchen_agent_v2",
        field: "agents[0].claims_bounds.max_refund_without_escallation",
        message: 'unknown key "max_refund_without_escallation" — did you mean "max_refund_without_escalation"?',
      },
    ]);
  });

  it.each([
    [
      "a nested block key",
      (t: string) => t.replace("        authority:", "        autority:"),
      "autority",
      /did you mean "authority"/,
    ],
    [
      "a top-level key",
      (t: string) => t.replace("simulation:", "simulaton:"),
      "simulaton",
      /did you mean "simulation"/,
    ],
    [
      "a key that matches nothing",
      (t: string) => t.replace("    priority: 1\n", "    priority: 1\n    favourite_colour: blue\n"),
      "favourite_colour",
      /unknown key "favourite_colour"/,
    ],
  ])("reports %s at its own line", (_name, mutate, key, message) => {
    const text = mutate(roaText);
    const err = issuesOf(() => parseConfig(text, "c.yaml", NOW));
    const issue = err.issues.find((i) => i.field.endsWith(key));
    expect(issue?.line).toBe(lineOfText(text, `${key}:`));
    expect(issue?.message).toMatch(message);
  });

  it("says an amount with a decimal comma is a number format problem", () => {
    const block = seedEraText.replace("amount: 149.50", "amount: 149,50");
    expect(issuesOf(() => parseConfig(block, "c.yaml", NOW)).issues).toEqual([
      expect.objectContaining({
        line: lineOfText(block, "149,50"),
        field: "context_store.orders.ord_101.amount",
        message: expect.stringMatching(/"149,50" is not a number: .*149\.50/),
      }),
    ]);
    const flow = configText.replace("amount: 80.00 }", "amount: 80,00 }");
    const issues = issuesOf(() => parseConfig(flow, "c.yaml", NOW)).issues;
    expect(issues).toEqual([
      expect.objectContaining({
        field: "context_store.orders.ord_007.amount",
        message: expect.stringMatching(/80,00 is not a number in YAML .* e\.g\. 80\.00/),
      }),
    ]);
    expect(issues[0]!.message).not.toMatch(/Unrecognized/);
  });

  it.each([
    [
      "no categories anywhere",
      (t: string) => t.replace(/ {6}authorized_instruments:\n( {8}- \w+\n)+/, ""),
      seedEraText,
      "agents[0].claims_bounds.allowed_refund_categories",
      /list the refundable categories/,
    ],
    [
      "both category keys",
      (t: string) =>
        t.replace(
          "      authorized_instruments:",
          "      authorized_categories: [garden]\n      authorized_instruments:",
        ),
      seedEraText,
      "agents[0].contract.authorized_instruments",
      /once/,
    ],
    [
      "a flat key in a roa.dir/v1 contract",
      (t: string) =>
        t.replace(
          "        kind: ResponsibilityContract\n",
          "        kind: ResponsibilityContract\n        escalate_on_uncertainty: 0.5\n",
        ),
      roaText,
      "agents[0].contract.escalate_on_uncertainty",
      /responsibility\.escalation\.confidence_below/,
    ],
    [
      "a contract for another agent",
      (t: string) => t.replace("agent_id: kitchen_agent_v2", "agent_id: someone_else"),
      roaText,
      "agents[0].contract.subject.agent_id",
      /contract is for someone_else/,
    ],
    [
      "another contract version",
      (t: string) => t.replace("api_version: roa.dir/v1", "api_version: roa.dir/v2"),
      roaText,
      "agents[0].contract.api_version",
      /roa\.dir\/v1/,
    ],
    [
      "another escalation mode",
      (t: string) => t.replace("mode: conditional", "mode: always"),
      roaText,
      "agents[0].contract.responsibility.escalation.mode",
      /conditional/,
    ],
    [
      "a missing role (seed-era)",
      (t: string) => t.replace("      role: EXECUTOR\n", ""),
      seedEraText,
      "agents[0].contract.role",
      /role is missing/,
    ],
  ])("refuses %s, naming the field", (_name, mutate, base, field, message) => {
    const err = issuesOf(() => parseConfig(mutate(base), "c.yaml", NOW));
    expect(err.issues.find((i) => i.field === field)?.message).toMatch(message);
  });

  it("tells the registry's answer for the configured version", () => {
    expect(agentHandshake(parseConfig(seedEraText, "c.yaml", NOW)).ok).toBe(true);
    const refused = agentHandshake(
      parseConfig(
        seedEraText.replace(
          '  - agent_id: "returns_agent_v1"\n',
          '  - agent_id: "returns_agent_v1"\n    version: "2.0.0"\n',
        ),
        "c.yaml",
        NOW,
      ),
    );
    expect(refused).toMatchObject({ ok: false, code: "INCOMPATIBLE_VERSION" });
  });
});

describe("parseConfig with orders in lines and currencies (issue 32)", () => {
  const text = readFileSync(new URL("../../scenarios/config.yaml", import.meta.url), "utf8");

  it("passes per-currency bounds, windows per category and refund_shipping to the kernel's contract", () => {
    const withBounds = text
      .replace(/^( *)customer_limits: /m, "$1refund_shipping: with_last_line\n$1customer_limits: ")
      .replace(/^( *)currencies:\n(?:\1 {2}.*\n)+/m, "$1currencies: { USD: { max_refund_without_escalation: 600 } }\n");
    expect(withBounds).not.toBe(text);
    const { contract } = parseConfig(withBounds, "c.yaml", Date.parse("2026-06-01T12:00:00Z")).agent;
    expect(contract.currencies).toEqual({ USD: { max_refund_without_escalation: 600 } });
    expect(contract.refund_shipping).toBe("with_last_line");
  });

  it("reads an order with lines, a currency and shipping, amounts as strings or numbers", () => {
    const withOrder = text.replace(
      /^context_store:\n {2}orders:\n/m,
      'context_store:\n  orders:\n    ord_usd: { purchase_date: "-2d", currency: USD, shipping: "9.99", lines: [ { line_id: l1, category: electronics, quantity: 1, amount: "499.00" }, { line_id: l2, category: clothing, quantity: 2, amount: 40 } ] }\n',
    );
    expect(withOrder).not.toBe(text);
    const order = parseConfig(withOrder, "c.yaml", Date.parse("2026-06-01T12:00:00Z")).orders.find(
      (o) => o.order_id === "ord_usd",
    );
    expect(order).toMatchObject({ currency: "USD", shipping: "9.99", lines: [{ line_id: "l1" }, { amount: 40 }] });
  });
});

describe("parseConfig with a return policy (issue 33)", () => {
  // The bundled config without its own return policy (sports gear asked back): each test writes its own.
  const bundled = readFileSync(new URL("../../scenarios/config.yaml", import.meta.url), "utf8");
  const text = bundled.replace(/^( *)returns:\n(?:\1 {2}.*\n)+/m, "");
  const withReturns = (returns: string) =>
    text.replace(/^( *)customer_limits: /m, `$1returns: ${returns}\n$1customer_limits: `);

  it("passes claims_bounds.returns to the kernel's contract", () => {
    const edited = withReturns(
      "{ return_required: true, keep_item_below: { EUR: 25 }, pay_on: delivered, categories: { electronics: { pay_on: inspected } } }",
    );
    expect(edited).not.toBe(text);
    const { contract } = parseConfig(edited, "c.yaml", Date.parse("2026-06-01T12:00:00Z")).agent;
    expect(contract.returns).toEqual({
      return_required: true,
      keep_item_below: { EUR: 25 },
      pay_on: "delivered",
      categories: { electronics: { pay_on: "inspected" } },
    });
  });

  it("reads the bundled config's own: sports gear asked back, paid on its delivery, kept below 30 EUR", () => {
    expect(text).not.toBe(bundled);
    expect(parseConfig(bundled, "c.yaml", Date.parse("2026-06-01T12:00:00Z")).agent.contract.returns).toEqual({
      pay_on: "delivered",
      return_deadline_days: 30,
      refund_due_days: 14,
      categories: { sports: { return_required: true, keep_item_below: { EUR: 30 } } },
    });
  });

  it("leaves the contract without returns when the file has none (every ACCEPT pays at once)", () => {
    expect(parseConfig(text, "c.yaml", Date.parse("2026-06-01T12:00:00Z")).agent.contract.returns).toBeUndefined();
  });

  it("refuses a bad value naming the field", () => {
    expect(() => parseConfig(withReturns("{ return_required: true, pay_on: received }"), "c.yaml", 0)).toThrow(
      /returns\.pay_on/,
    );
  });
});
