// Which fields are sealed: the customer's words (free text, a claim's reason, a note, a name or email), never the
// decision path nor a reason the system wrote for a code.
import { describe, expect, it } from "vitest";
import {
  ERASED,
  erasedPaths,
  isSealed,
  openPersonalFields,
  personalFields,
  sealPersonalFields,
  withPersonalErased,
} from "./sealing.ts";

/** A stand-in cipher with the token's exact form (the vault's own contract is adapters/vault/vault.test.ts). */
const seal = async (t: string) =>
  `pd1:Y2xtXzE:${"A".repeat(16)}:${Buffer.from(t).toString("base64url")}:${"B".repeat(22)}`;
const open = async (t: string) => Buffer.from(t.split(":")[3] ?? "", "base64url").toString();
const gone = async () => undefined;

const details = {
  claim_id: "clm_1",
  input: { claim_text: "I am Anna, anna@example.com" },
  claim: { order_id: "ord_1", amount_eur: 12.5, category: "home", reason: "Broken, call Anna" },
  verdict: { reason_code: "AMOUNT_ABOVE_LIMIT", reason: "Amount 1200.0 EUR exceeds the limit" },
  refusal: { code: "EXCEEDS_ORDER_AMOUNT", reason: "more than the order" },
  review: { note: "customer Anna says so", amount_eur: 10 },
  order: { order_id: "ord_1", customer_id: "cus_1", customer_name: "Anna Z", customer_email: "a@example.com" },
  steps: [{ reason: "in a list" }],
};

describe("sealing the personal fields", () => {
  it("seals exactly the customer's words and leaves the decision path and coded reasons in clear", async () => {
    const sealed = await sealPersonalFields(details, seal);
    expect(personalFields(details).map((f) => f.path)).toEqual([
      "input.claim_text",
      "claim.reason",
      "review.note",
      "order.customer_name",
      "order.customer_email",
      "steps.0.reason",
    ]);
    for (const f of personalFields(sealed)) expect(f.value.startsWith("pd1:")).toBe(true);
    expect(sealed.verdict).toEqual(details.verdict);
    expect(sealed.refusal).toEqual(details.refusal);
    expect(sealed.claim.amount_eur).toBe(12.5);
    expect(sealed.order.customer_id).toBe("cus_1");
    expect(JSON.stringify(sealed)).not.toContain("Anna");
    expect(await openPersonalFields(sealed, open)).toEqual(details);
  });

  it("reads every field of a destroyed key as erased, and names where", async () => {
    const erased = await openPersonalFields(await sealPersonalFields(details, seal), gone);
    expect(erased.claim.reason).toBe(ERASED);
    expect(erasedPaths(erased)).toEqual(personalFields(details).map((f) => f.path));
  });

  it("hands every personal field to the vault, one that reads like a token or erased included, and no other", async () => {
    const seen: string[] = [];
    const forged = `pd1:Y2xtXzI:${"C".repeat(16)}:AAAA:${"D".repeat(22)}`;
    const record = { claim: { reason: forged, order_id: "pd1:abc" }, note: ERASED, input: { claim_text: "pd1:abc" } };
    await sealPersonalFields(record, async (t) => (seen.push(t), seal(t)));
    expect(seen.sort()).toEqual([ERASED, forged, "pd1:abc"].sort());
  });

  it("takes only the exact form of a token for sealed, never text that merely starts like one", () => {
    expect(isSealed(`pd1:Y2xtXzE:${"A".repeat(16)}:abc:${"B".repeat(22)}`)).toBe(true);
    for (const text of ["pd1:abc", "pd1:a:b:c:d", `pd1:Y2xtXzE:${"A".repeat(15)}:abc:${"B".repeat(22)}`, "pd1:x y"])
      expect(isSealed(text)).toBe(false);
  });

  it("reads a record the same plain, sealed or erased once its personal fields are read as erased", async () => {
    const sealed = await sealPersonalFields(details, seal);
    const erased = await openPersonalFields(sealed, gone);
    const same = withPersonalErased(details);
    expect(withPersonalErased(sealed)).toEqual(same);
    expect(withPersonalErased(erased)).toEqual(same);
    expect(same).toEqual(erased);
    expect(withPersonalErased({ ...details, claim: { ...details.claim, amount_eur: 13 } })).not.toEqual(same);
  });
});
