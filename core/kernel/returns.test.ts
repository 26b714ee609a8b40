import { describe, expect, it } from "vitest";
import { ClaimsContractSchema } from "../integrity/contracts.ts";
import type { ClaimsContract } from "../integrity/contracts.ts";
import { money } from "./money.ts";
import { decideReturn, distinctReturnEvents, returnDeadlineAt, returnNeeded, returnPolicyFor } from "./returns.ts";
import type { RecordedReturnEvent, ReturnEventKind, ReturnState } from "./returns.ts";

const base = { allowed_refund_categories: ["electronics"], max_refund_without_escalation: 500, return_window_days: 14 };
const contract = (returns: unknown): ClaimsContract => ClaimsContractSchema.parse({ ...base, returns });

const ev = (event_id: string, event: ReturnEventKind, at = "2026-06-02T10:00:00Z"): RecordedReturnEvent => ({
  event_id,
  event,
  at,
  recorded_at: at,
});

describe("the return policy", () => {
  it("asks no return without a returns block (today's behaviour)", () => {
    expect(returnPolicyFor(base as ClaimsContract, "electronics")).toBeUndefined();
    expect(returnNeeded(base as ClaimsContract, ["electronics"], money(50000, "EUR"))).toBeUndefined();
  });

  it("fills the defaults and lets a category override the default's fields", () => {
    const c = contract({
      return_required: true,
      categories: { clothing: { pay_on: "inspected", return_deadline_days: 10 } },
    });
    expect(returnPolicyFor(c, "electronics")).toEqual({
      returnRequired: true,
      keepItemBelow: {},
      payOn: "delivered",
      returnDeadlineDays: 30,
      refundDueDays: 14,
    });
    expect(returnPolicyFor(c, "clothing")).toMatchObject({
      returnRequired: true,
      payOn: "inspected",
      returnDeadlineDays: 10,
    });
  });

  it("keeps the item below keep_item_below in the refund's currency, and asks it at the bound", () => {
    const c = contract({ return_required: true, keep_item_below: { EUR: 25 } });
    expect(returnNeeded(c, ["electronics"], money(2499, "EUR"))).toBeUndefined();
    expect(returnNeeded(c, ["electronics"], money(2500, "EUR"))).toMatchObject({ payOn: "delivered" });
    // No bound for USD: a return is asked whatever the amount.
    expect(returnNeeded(c, ["electronics"], money(100, "USD"))).toMatchObject({ returnRequired: true });
  });

  it("applies the strictest policy of several lines: the latest pay_on, the shortest deadline", () => {
    const c = contract({
      return_required: false,
      categories: {
        a: { return_required: true, pay_on: "in_transit", return_deadline_days: 20 },
        b: { return_required: true, pay_on: "inspected", return_deadline_days: 40, refund_due_days: 10 },
      },
    });
    expect(returnNeeded(c, ["a", "b", "other"], money(9000, "EUR"))).toMatchObject({
      payOn: "inspected",
      returnDeadlineDays: 20,
      refundDueDays: 10,
    });
    expect(returnNeeded(c, ["other"], money(9000, "EUR"))).toBeUndefined();
  });

  it.each([
    [{ pay_on: "received" }, "pay_on"],
    [{ return_required: "yes" }, "return_required"],
    [{ keep_item_below: { eur: 10 } }, "keep_item_below"],
    [{ keep_item_below: { EUR: -1 } }, "keep_item_below"],
    [{ return_deadline_days: 0 }, "return_deadline_days"],
    [{ refund_due_days: 1.5 }, "refund_due_days"],
    [{ categories: { toys: { pay_on: "never" } } }, "pay_on"],
    [{ pay_in: "delivered" }, "pay_in"],
  ])("refuses %j naming %s", (returns, field) => {
    const parsed = ClaimsContractSchema.safeParse({ ...base, returns });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain(field);
  });

  it("puts the deadline the policy's days after the decision", () => {
    expect(returnDeadlineAt("2026-06-01T12:00:00.000Z", 30)).toBe("2026-07-01T12:00:00.000Z");
  });
});

describe("decideReturn", () => {
  const state: ReturnState = { payOn: "delivered", deadlineAt: "2026-07-01T00:00:00.000Z" };
  const before = Date.parse("2026-06-15T00:00:00Z");
  const after = Date.parse("2026-07-02T00:00:00Z");

  it.each<[string, ReturnState, RecordedReturnEvent[], number, unknown]>([
    ["no event yet", state, [], before, { outcome: "WAIT", shipped: false }],
    ["in transit, paid on delivery", state, [ev("e1", "in_transit")], before, { outcome: "WAIT", shipped: true }],
    [
      "delivered pays",
      state,
      [ev("e1", "in_transit"), ev("e2", "delivered")],
      before,
      { outcome: "PAY", event_id: "e2" },
    ],
    [
      "inspected_ok reaches delivered too",
      state,
      [ev("e3", "inspected_ok")],
      before,
      { outcome: "PAY", event_id: "e3" },
    ],
    [
      "in_transit pays on pay_on in_transit",
      { ...state, payOn: "in_transit" },
      [ev("e1", "in_transit")],
      before,
      { outcome: "PAY", event_id: "e1" },
    ],
    [
      "delivered does not pay on inspected",
      { ...state, payOn: "inspected" },
      [ev("e2", "delivered")],
      before,
      { outcome: "WAIT", shipped: true },
    ],
    [
      "a failed inspection opens a review",
      { ...state, payOn: "inspected" },
      [ev("e2", "delivered"), ev("e4", "inspected_failed")],
      before,
      { outcome: "REVIEW", reason_code: "RETURN_INSPECTION_FAILED", event_id: "e4" },
    ],
    ["no event by the deadline", state, [], after, { outcome: "NOT_RECEIVED" }],
    [
      "shipped before the deadline is not lost at it",
      state,
      [ev("e1", "in_transit")],
      after,
      { outcome: "WAIT", shipped: true },
    ],
    ["closed, nothing since", { ...state, closed: "NOT_RECEIVED" }, [], after, { outcome: "CLOSED" }],
    [
      "an event after the deadline closed it goes to a person",
      { ...state, closed: "NOT_RECEIVED" },
      [ev("e2", "delivered", "2026-07-03T00:00:00Z")],
      after,
      { outcome: "REVIEW", reason_code: "RETURN_AFTER_DEADLINE", event_id: "e2" },
    ],
  ])("%s", (_name, s, events, now, expected) => {
    expect(decideReturn(s, events, now)).toEqual(expected);
  });

  it("gives the same answer for any order of arrival and any duplicates", () => {
    const events = [
      ev("a", "in_transit", "2026-06-02T10:00:00Z"),
      ev("b", "delivered", "2026-06-04T10:00:00Z"),
      ev("c", "inspected_ok", "2026-06-05T10:00:00Z"),
    ];
    const orders = [events, [...events].reverse(), [events[2]!, events[0]!, events[1]!, events[2]!, events[0]!]];
    for (const payOn of ["in_transit", "delivered", "inspected"] as const) {
      const answers = orders.map((o) => decideReturn({ ...state, payOn }, o, before));
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    }
    expect(decideReturn(state, [...events].reverse(), before)).toEqual({ outcome: "PAY", event_id: "b" });
  });

  it("keeps the first recording of an event id", () => {
    const first = ev("a", "in_transit");
    const again = { ...ev("a", "delivered"), recorded_at: "2026-06-03T00:00:00Z" };
    expect(distinctReturnEvents([first, again])).toEqual([first]);
  });
});
