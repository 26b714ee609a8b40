// Issue 32's last piece through the real pipeline (in memory, the rules model): free text names items ("both shirts",
// "the TV and one shirt"), the kernel matches them to the order's lines and decides, lists and reserves those lines;
// a claim on lines gets a proposal per line from the crew. Every claim replays IDENTICAL from its audit.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { Order } from "../core/integrity/index.ts";
import { claimView } from "../core/kernel/claim-record.ts";
import { TV_AND_SHIRTS } from "../core/kernel/order-lines.test-kit.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { createInProcessPipeline } from "./in-process.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const agent = {
  ...config.agent,
  contract: { ...config.agent.contract, currencies: { USD: { max_refund_without_escalation: 600 } } },
};
/** A TV (499.00) and two shirts (40.00 for both), in USD, bought 3 days ago; and two lamps told apart by title. */
const ORDERS = [
  {
    order_id: "ord_usd",
    purchase_date: "2026-05-29T10:00:00Z",
    currency: "USD",
    lines: TV_AND_SHIRTS.map((line) => ({ ...line })),
  },
  {
    order_id: "ord_lamps",
    purchase_date: "2026-05-29T10:00:00Z",
    currency: "USD",
    lines: [
      { line_id: "a", title: "Oak desk lamp", category: "home", quantity: 1, amount: "30.00" },
      { line_id: "b", title: "Brass floor lamp", category: "home", quantity: 1, amount: "90.00" },
    ],
  },
] as Order[];

function pipeline() {
  return createInProcessPipeline({
    agent,
    orders: [...config.orders, ...ORDERS],
    llm: createRulesModel({ contract: agent.contract, responsibility: agent.responsibility }),
    clock: { now: () => NOW },
  });
}

const linesOf = (record: unknown) =>
  (claimView(record as never) as { lines?: { line_id: string; reason_code: string; amount: { value: string } }[] })
    .lines;

describe("free text on an order with lines", () => {
  it("'both shirts' is refunded on the shirt line, and replays IDENTICAL", async () => {
    const p = pipeline();
    const text = "Both shirts of order ord_usd tore after one wash. Please refund $40.";
    const { record } = await p.decide({ claim_text: text }, { claimId: "clm_shirts" });
    expect(record).toMatchObject({
      verdict: "ACCEPT",
      claim: { currency: "USD", items: [{ name: "shirts", quantity: 2 }] },
    });
    expect(linesOf(record)?.map((l) => [l.line_id, l.amount.value])).toEqual([["l2", "40.00"]]);
    expect((await p.deps.ledger.get("ord_usd"))?.claim_lines?.clm_shirts).toEqual({ lines: { l2: 4000 } });
    expect(replayClaim("clm_shirts", p.auditEvents()).status).toBe("IDENTICAL");
  });

  it("'one of the two shirts' asked at both shirts' price is rejected on the shirt line", async () => {
    const p = pipeline();
    const text = "One of the two shirts of order ord_usd tore. Please refund $40.";
    const { record } = await p.decide({ claim_text: text }, { claimId: "clm_one" });
    expect(record).toMatchObject({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(replayClaim("clm_one", p.auditEvents()).status).toBe("IDENTICAL");
  });

  it("'the lamp' of an order of two lamps goes to a person (LINE_AMBIGUOUS)", async () => {
    const p = pipeline();
    const ambiguous = await p.decide(
      { claim_text: "The lamp from order ord_lamps flickers, refund $30 please" },
      { claimId: "clm_lamp" },
    );
    expect(ambiguous.record).toMatchObject({ verdict: "ESCALATE", reason_code: "LINE_AMBIGUOUS" });
    expect(replayClaim("clm_lamp", p.auditEvents()).status).toBe("IDENTICAL");
  });
});

describe("the crew proposes per line", () => {
  it("a claim on lines gets the rules model's proposal per line, decided, refunded and replayed as such", async () => {
    const p = pipeline();
    const body = {
      claim: {
        order_id: "ord_usd",
        reason: "The TV is cracked and one shirt tore",
        lines: [{ line_id: "l1" }, { line_id: "l2", quantity: 1 }],
      },
    };
    const { record } = await p.decide(body, { claimId: "clm_per_line" });
    expect(record).toMatchObject({
      verdict: "ACCEPT",
      proposal: {
        lines: [
          { line_id: "l1", quantity: null, amount: 499 },
          { line_id: "l2", quantity: 1, amount: 20 },
        ],
      },
    });
    expect(linesOf(record)?.map((l) => [l.line_id, l.amount.value])).toEqual([
      ["l1", "499.00"],
      ["l2", "20.00"],
    ]);
    expect((await p.deps.ledger.get("ord_usd"))?.claim_lines?.clm_per_line).toEqual({
      lines: { l1: 49_900, l2: 2000 },
    });
    expect(replayClaim("clm_per_line", p.auditEvents()).status).toBe("IDENTICAL");
  });
});
