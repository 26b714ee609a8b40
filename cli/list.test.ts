// `claims list`'s lines: a header row, and the amount that counts — what a reviewer approved, not what was claimed.
import { describe, expect, it } from "vitest";
import { LIST_HEADER, claimAmount, formatClaimLine, refundState } from "./list.ts";

const decided = {
  claim_id: "clm_0123456789abcdef0123",
  status: "DECIDED",
  verdict: "ESCALATE",
  reason_code: "AMOUNT_ABOVE_LIMIT",
  proposal: { order_id: "ord_002", amount_eur: 1200 },
};

describe("claims list lines", () => {
  it("shows the approved amount of a claim approved for less, with the proposed one beside it", () => {
    const approved = {
      ...decided,
      executed: true,
      review: { status: "APPROVED", decision: "APPROVE", amount_eur: 900 },
      refund: { status: "SETTLED" },
    };
    expect(claimAmount(approved)).toBe("900.00 EUR (approved; 1200.00 proposed)");
    expect(formatClaimLine(approved)).toMatch(
      /^clm_0123456789abcdef0123 +DECIDED +ESCALATE +AMOUNT_ABOVE_LIMIT +ord_002 +900\.00 EUR \(approved; 1200\.00 proposed\) SETTLED +APPROVED \(APPROVE\)$/,
    );
  });

  it.each([
    [
      "approved in full",
      { ...decided, review: { status: "APPROVED", decision: "APPROVE", amount_eur: 1200 } },
      "1200.00 EUR (approved)",
    ],
    ["denied: the proposal's amount", { ...decided, review: { status: "DENIED", decision: "DENY" } }, "1200.00 EUR"],
    [
      "extracted only",
      { claim_id: "c", status: "RUNNING", extracted: { order_id: "ord_1", amount_eur: 5 } },
      "5.00 EUR",
    ],
    ["no amount", { claim_id: "c", status: "RECEIVED" }, ""],
    [
      "in the order's currency: yen without decimals",
      { ...decided, proposal: { order_id: "o", amount_eur: 500 }, amount: { value: "500", currency: "JPY" } },
      "500 JPY",
    ],
    [
      "dinars with three decimals, approved for less",
      {
        ...decided,
        proposal: { order_id: "o", amount_eur: 12.345 },
        amount: { value: "12.345", currency: "KWD" },
        review: { status: "APPROVED", decision: "APPROVE", amount: { value: "10.000", currency: "KWD" } },
      },
      "10.000 KWD (approved; 12.345 proposed)",
    ],
  ])("%s", (_name, view, amount) => {
    expect(claimAmount(view)).toBe(amount);
  });

  it.each([
    ["settled", { refund: { status: "SETTLED" } }, "SETTLED"],
    ["failed, its review open", { refund: { status: "FAILED", review: { status: "PENDING" } } }, "FAILED"],
    ["failed, its review closed", { refund: { status: "FAILED", review: { status: "CLOSED" } } }, "CLOSED"],
    ["with the provider", { refund: { status: "PENDING" } }, "PENDING"],
    ["executed, not yet with the provider", { executed: true }, "AUTHORISED"],
    ["no refund", { executed: false }, ""],
  ])("says where the money is: %s", (_name, over, state) => {
    expect(refundState({ ...decided, ...over })).toBe(state);
  });

  it("puts a header above the columns the lines use", () => {
    expect(LIST_HEADER).toMatch(/^CLAIM +STATUS +VERDICT +REASON +ORDER +AMOUNT +REFUND +REVIEW$/);
    const line = formatClaimLine(decided);
    expect(line.indexOf("ESCALATE")).toBe(LIST_HEADER.indexOf("VERDICT"));
    expect(line.indexOf("ord_002")).toBe(LIST_HEADER.indexOf("ORDER"));
    expect(line.indexOf("1200.00")).toBe(LIST_HEADER.indexOf("AMOUNT"));
  });
});
