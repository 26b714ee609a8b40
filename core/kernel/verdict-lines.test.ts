// The verdict per line (docs/kernel.md "Orders with lines"): every line carries the claim's one verdict; a claim failed
// by one line's category or window says which line failed, and the others OTHER_LINE_FAILED.
import { describe, expect, it } from "vitest";
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, Order } from "../integrity/contracts.ts";
import { DAY_MS } from "../integrity/time.ts";
import { testResponsibility } from "./contract.test-kit.ts";
import { TV_AND_SHIRTS } from "./order-lines.test-kit.ts";
import { verdictLines, type VerdictLinesInput } from "./verdict-lines.ts";

const RECEIVED_MS = Date.parse("2026-11-30T10:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const POLICY: ClaimsContract = {
  allowed_refund_categories: ["electronics", "clothing"],
  max_refund_without_escalation: 500,
  return_window_days: { default: 14, electronics: 30 },
};
/** Bought 20 days before the claim: the TV (30 days) is within its window, the shirts (14) are not. */
const ORDER: Order = {
  order_id: "ord_100",
  purchase_date: iso(RECEIVED_MS - 20 * DAY_MS),
  currency: "USD",
  shipping: "9.99",
  lines: TV_AND_SHIRTS.map((l) => ({ ...l })),
};

function lines(verdict: VerdictLinesInput["verdict"], amount: number | null, claim: Partial<Claim>, order = ORDER) {
  return verdictLines({
    verdict,
    amountEur: amount,
    order,
    claim: { category: "electronics", ...claim },
    contract: POLICY,
    responsibility: testResponsibility,
    receivedAt: iso(RECEIVED_MS),
  });
}

describe("a verdict's lines", () => {
  it("says which line failed its window in a claim on both lines, and that the other passed", () => {
    const both = { lines: [{ line_id: "l1" }, { line_id: "l2" }] };
    expect(lines({ verdict: "REJECT", reason_code: "OUTSIDE_RETURN_WINDOW" }, 539, both)).toEqual([
      {
        line_id: "l1",
        verdict: "REJECT",
        reason_code: "OTHER_LINE_FAILED",
        amount: { value: "499.00", currency: "USD" },
      },
      {
        line_id: "l2",
        verdict: "REJECT",
        reason_code: "OUTSIDE_RETURN_WINDOW",
        amount: { value: "40.00", currency: "USD" },
      },
    ]);
  });

  it("says which line's category is not refundable", () => {
    const policy = { ...POLICY, allowed_refund_categories: ["clothing"] };
    const v = verdictLines({
      verdict: { verdict: "REJECT", reason_code: "CATEGORY_NOT_ALLOWED" },
      amountEur: 100,
      order: { ...ORDER, purchase_date: iso(RECEIVED_MS - DAY_MS) },
      claim: { category: "electronics", lines: [{ line_id: "l2" }, { line_id: "l1" }] },
      contract: policy,
      responsibility: testResponsibility,
      receivedAt: iso(RECEIVED_MS),
    });
    // The amount falls on the lines in the claim's order: the shirts take their 40.00, the TV the rest.
    expect(v?.map((l) => [l.line_id, l.reason_code, l.amount.value])).toEqual([
      ["l2", "OTHER_LINE_FAILED", "40.00"],
      ["l1", "CATEGORY_NOT_ALLOWED", "60.00"],
    ]);
  });

  it("gives every line the claim's verdict and reason when the claim as a whole decided", () => {
    const both = { lines: [{ line_id: "l1" }, { line_id: "l2", quantity: 1 }] };
    expect(lines({ verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" }, 519, both)).toEqual([
      {
        line_id: "l1",
        verdict: "ACCEPT",
        reason_code: "VALIDATION_PASSED",
        amount: { value: "499.00", currency: "USD" },
      },
      {
        line_id: "l2",
        verdict: "ACCEPT",
        reason_code: "VALIDATION_PASSED",
        amount: { value: "20.00", currency: "USD" },
      },
    ]);
    const escalated = lines({ verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT" }, 519, both);
    expect(escalated?.map((l) => [l.verdict, l.reason_code])).toEqual([
      ["ESCALATE", "AMOUNT_ABOVE_LIMIT"],
      ["ESCALATE", "AMOUNT_ABOVE_LIMIT"],
    ]);
  });

  it("names the one line a claim in today's form is matched to by its category", () => {
    expect(lines({ verdict: "REJECT", reason_code: "OUTSIDE_RETURN_WINDOW" }, 40, { category: "clothing" })).toEqual([
      {
        line_id: "l2",
        verdict: "REJECT",
        reason_code: "OUTSIDE_RETURN_WINDOW",
        amount: { value: "40.00", currency: "USD" },
      },
    ]);
  });

  it("counts the order's minor unit: yen without decimals, dinars with three", () => {
    const jpy = {
      ...ORDER,
      currency: "JPY",
      shipping: "0",
      lines: [
        { line_id: "a", category: "electronics", quantity: 1, amount: "50000" },
        { line_id: "b", category: "clothing", quantity: 1, amount: "3000" },
      ],
    };
    const kwd = {
      ...jpy,
      currency: "KWD",
      lines: [
        { line_id: "a", category: "electronics", quantity: 1, amount: "150.500" },
        { line_id: "b", category: "clothing", quantity: 1, amount: "12.345" },
      ],
    };
    const accept = { verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" } as const;
    expect(lines(accept, 3000, { lines: [{ line_id: "b" }] }, jpy)?.[0]?.amount).toEqual({
      value: "3000",
      currency: "JPY",
    });
    expect(lines(accept, 12.345, { lines: [{ line_id: "b" }] }, kwd)?.[0]?.amount).toEqual({
      value: "12.345",
      currency: "KWD",
    });
  });

  it("has none to tell on a one-line order, for lines not the order's, an ambiguous line or no usable amount", () => {
    const accept = { verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" } as const;
    const oneLine: Order = {
      order_id: "o",
      purchase_date: ORDER.purchase_date,
      currency: "EUR",
      category: "electronics",
      amount: 100,
    };
    expect(lines(accept, 100, {}, oneLine)).toBeUndefined();
    expect(
      lines({ verdict: "REJECT", reason_code: "LINE_NOT_IN_ORDER" }, 10, { lines: [{ line_id: "l9" }] }),
    ).toBeUndefined();
    expect(lines({ verdict: "ESCALATE", reason_code: "LINE_AMBIGUOUS" }, 10, { category: "home" })).toBeUndefined();
    expect(
      lines({ verdict: "REJECT", reason_code: "INVALID_AMOUNT" }, 10.001, { category: "clothing" }),
    ).toBeUndefined();
    expect(lines({ verdict: "REJECT", reason_code: "INVALID_AMOUNT" }, null, { category: "clothing" })).toBeUndefined();
  });
});
