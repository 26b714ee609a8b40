// INVALID_INPUT's issues worded for a person (pipeline/decide/input-issues.ts): zod's defaults reworded, a
// schema's own message kept, the path dotted.
import * as z from "zod";
import { describe, expect, it } from "vitest";
import { toInputIssues } from "./input-issues.ts";

const Body = z
  .object({
    order_id: z.string().min(3).max(5),
    amount_eur: z.number().positive().max(10_000),
    category: z.enum(["electronics", "clothing"]),
    kind: z.literal("claim"),
    items: z.array(z.string()).min(1),
    email: z.email(),
    ref: z.union([z.string(), z.number()]),
    note: z.string().refine((s) => !s.includes("<"), { message: "no markup in a note" }),
  })
  .strict();

const VALID = {
  order_id: "ord_1",
  amount_eur: 10,
  category: "clothing",
  kind: "claim",
  items: ["a"],
  email: "a@example.com",
  ref: 1,
  note: "fine",
};

function issuesOf(body: unknown) {
  const parsed = Body.safeParse(body);
  if (parsed.success) throw new Error("expected the body to be refused");
  return toInputIssues(parsed.error);
}

describe("INVALID_INPUT's issues", () => {
  it.each([
    ["a missing field", { order_id: undefined }, "order_id", "required: a string"],
    ["a wrong type", { amount_eur: "ten" }, "amount_eur", "expected a number, got a string"],
    ["an unknown option", { category: "food" }, "category", 'must be one of "electronics", "clothing"'],
    ["another literal", { kind: "other" }, "kind", 'must be "claim"'],
    ["too short a string", { order_id: "o" }, "order_id", "must have at least 3 characters"],
    ["too long a string", { order_id: "ord_123" }, "order_id", "must have at most 5 characters"],
    ["too small a number", { amount_eur: 0 }, "amount_eur", "must be more than 0"],
    ["too big a number", { amount_eur: 20_000 }, "amount_eur", "must be at most 10000"],
    ["an empty list", { items: [] }, "items", "must have at least 1 item"],
    ["a bad email", { email: "nope" }, "email", "must be a valid email address"],
    ["no alternative", { ref: true }, "ref", "must be a string or a number"],
    ["an unknown field", { extra: 1 }, "(body)", 'unknown field "extra": leave it out'],
    ["the schema's own message", { note: "<b>" }, "note", "no markup in a note"],
  ])("words %s for a person", (_what, change, path, message) => {
    expect(issuesOf({ ...VALID, ...change })).toEqual([{ path, message }]);
  });

  it("never passes zod's own English through", () => {
    const all = issuesOf({ amount_eur: "x", category: 1, extra: true, items: "no" });
    expect(all.length).toBeGreaterThan(4);
    expect(
      all.filter((i) => /Invalid input|Invalid option|Too small|Too big|Unrecognized key/.test(i.message)),
    ).toEqual([]);
  });
});
