// A claim on lines completed from its order (core/kernel/claim-completion.ts; docs/orders.md#claims-on-lines): the
// amount each line asks defaults to what its units cost, the claim's amount is the sum, its category the first
// line's; what the order makes wrong is named by field.
import { describe, expect, it } from "vitest";
import { ClaimSubmissionSchema, type ClaimSubmission } from "../claim/claim.ts";
import type { Order } from "../integrity/contracts.ts";
import { completeClaim, needsCompletion } from "./claim-completion.ts";
import { ISSUE_EXAMPLE_ORDER } from "./order-lines.test-kit.ts";

const USD = ISSUE_EXAMPLE_ORDER as Order;
const submitted = (over: Record<string, unknown>): ClaimSubmission =>
  ClaimSubmissionSchema.parse({ order_id: "ord_1", reason: "one shirt tore", ...over });

describe("completeClaim", () => {
  it("asks of each line what its units cost by default, sums them, and takes the first line's category", () => {
    const done = completeClaim(submitted({ lines: [{ line_id: "l2", quantity: 1 }, { line_id: "l1" }] }), USD);
    expect(done).toEqual({
      ok: true,
      claim: {
        order_id: "ord_1",
        reason: "one shirt tore",
        amount_eur: 519,
        category: "clothing",
        lines: [
          { line_id: "l2", quantity: 1, amount: "20.00" },
          { line_id: "l1", amount: "499.00" },
        ],
      },
    });
  });

  it("rounds the cost of some units down to the minor unit (3 units paid 10.00: one costs 3.33)", () => {
    const order = {
      ...USD,
      lines: [{ line_id: "a", category: "toys", quantity: 3, amount: "10.00" }],
      shipping: undefined,
    };
    const done = completeClaim(submitted({ lines: [{ line_id: "a", quantity: 1 }] }), order as Order);
    expect(done).toMatchObject({ ok: true, claim: { amount_eur: 3.33, lines: [{ amount: "3.33" }] } });
  });

  it("takes per-line amounts as decimal strings or JSON numbers, exact in the order's currency", () => {
    const done = completeClaim(
      submitted({
        lines: [
          { line_id: "l1", amount: 100 },
          { line_id: "l2", quantity: 1, amount: "12.5" },
        ],
      }),
      USD,
    );
    expect(done).toMatchObject({
      ok: true,
      claim: { amount_eur: 112.5, lines: [{ amount: "100.00" }, { amount: "12.50" }] },
    });
    const yen = {
      ...USD,
      currency: "JPY",
      shipping: "999",
      lines: [{ line_id: "l1", category: "toys", quantity: 1, amount: "4000" }],
    };
    expect(completeClaim(submitted({ lines: [{ line_id: "l1", amount: "20.5" }] }), yen as Order)).toEqual({
      ok: false,
      issues: [{ path: ["lines", 0, "amount"], message: expect.stringMatching(/JPY has no minor unit.*in JPY/) }],
    });
    expect(completeClaim(submitted({ lines: [{ line_id: "l1", amount: "20.125" }] }), USD)).toMatchObject({
      ok: false,
      issues: [{ path: ["lines", 0, "amount"], message: expect.stringContaining("more than two decimals") }],
    });
  });

  it("lets an amount above what the units cost through: the kernel rejects it for that line", () => {
    const done = completeClaim(submitted({ lines: [{ line_id: "l2", quantity: 1, amount: "25.00" }] }), USD);
    expect(done).toMatchObject({ ok: true, claim: { amount_eur: 25, lines: [{ amount: "25.00" }] } });
  });

  it.each([
    [
      "a line the order does not have",
      [{ line_id: "l9" }],
      ["lines", 0, "line_id"],
      /not a line of order ord_1 \(its lines: l1, l2\)/,
    ],
    [
      "more units than were bought",
      [{ line_id: "l2", quantity: 3 }],
      ["lines", 0, "quantity"],
      /3 units of line l2 claimed; order ord_1 bought 2/,
    ],
  ])("names %s by its field", (_name, lines, path, message) => {
    expect(completeClaim(submitted({ lines }), USD)).toEqual({
      ok: false,
      issues: [{ path, message: expect.stringMatching(message) }],
    });
  });

  it("refuses an amount_eur that is not the sum of the lines' amounts, and an order nobody knows", () => {
    const both = submitted({ amount_eur: 30, lines: [{ line_id: "l2", amount: "20.00" }] });
    expect(completeClaim(both, USD)).toMatchObject({ ok: false, issues: [{ path: ["amount_eur"] }] });
    expect(completeClaim(submitted({ amount_eur: 20, lines: [{ line_id: "l2", amount: 20 }] }), USD)).toMatchObject({
      ok: true,
    });
    expect(completeClaim(submitted({ lines: [{ line_id: "l2" }] }), undefined)).toMatchObject({
      ok: false,
      issues: [{ path: ["order_id"], message: expect.stringContaining("is not known") }],
    });
  });

  it("keeps today's meaning of a claim that states amount_eur and lines without amounts (only its category filled)", () => {
    const claim = submitted({ amount_eur: 20, lines: [{ line_id: "l2", quantity: 1 }] });
    expect(completeClaim(claim, USD)).toMatchObject({
      ok: true,
      claim: { amount_eur: 20, category: "clothing", lines: [{ line_id: "l2", quantity: 1 }] },
    });
    expect(completeClaim(claim, USD)).not.toHaveProperty("claim.lines.0.amount");
  });

  it("completes only a claim on lines that leaves something out or asks per line", () => {
    expect(needsCompletion(submitted({ amount_eur: 10, category: "toys" }))).toBe(false);
    expect(needsCompletion(submitted({ amount_eur: 10, category: "toys", lines: [{ line_id: "l1" }] }))).toBe(false);
    expect(needsCompletion(submitted({ lines: [{ line_id: "l1" }] }))).toBe(true);
    expect(needsCompletion(submitted({ amount_eur: 10, lines: [{ line_id: "l1" }] }))).toBe(true);
    expect(needsCompletion(submitted({ amount_eur: 10, category: "x", lines: [{ line_id: "l1", amount: 10 }] }))).toBe(
      true,
    );
  });
});

describe("ClaimSubmissionSchema", () => {
  it("asks a claim without lines for amount_eur and category, naming each", () => {
    const parsed = ClaimSubmissionSchema.safeParse({ order_id: "ord_1", reason: "x" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toEqual(["amount_eur", "category"]);
  });

  it.each([
    ["zero", 0],
    ["negative", "-1.00"],
    ["more than 3 decimals", "1.0001"],
    ["not a number", "ten"],
    ["not finite", Number.POSITIVE_INFINITY],
  ])("refuses a line amount that is %s", (_name, amount) => {
    const parsed = ClaimSubmissionSchema.safeParse({ order_id: "o", lines: [{ line_id: "l1", amount }] });
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toEqual(["lines.0.amount"]);
  });
});
