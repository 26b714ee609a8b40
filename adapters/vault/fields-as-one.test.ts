// A JSON text's personal fields sealed as one token beside it (i37v: a verdict's body): the walk meets the fields in
// one order on both sides — inside JSON kept as text too —, an erased claim's read `[erased]`, and a token that does
// not belong to its text is refused with a clear error.
import { describe, expect, it } from "vitest";
import { ERASED } from "../../core/privacy/sealing.ts";
import { envelopeVault } from "./envelope.ts";
import type { DataKeyStore } from "./envelope.ts";
import { openFieldsAsOne, sealFieldsAsOne } from "./sealed-table.ts";

function keys(): DataKeyStore {
  const erased = new Set<string>();
  return {
    key: async (subject) => (erased.has(subject) ? { state: "erased" } : { state: "key", key: Buffer.alloc(32, 9) }),
    destroy: async (subject) => (erased.add(subject), "destroyed"),
  };
}

const CLAIM = "clm_0123456789abcdef0123456789abcdef";
const DICTIONARY = Buffer.from('{"order_id":"ord_1","amount_eur":42}');
const TEXT = JSON.stringify({
  audit: [
    { details: { claim: { reason: "It broke", order_id: "ord_1" }, note: "call me" } },
    { verdict: { reason_code: "VALIDATION_PASSED", reason: "Validation passed" } },
    { event: JSON.stringify({ claim_text: "my words, kept as text", amount_eur: 42 }) },
  ],
  customer_name: "Anna",
});

describe("a text's personal fields as one token", () => {
  it("leaves the fields empty in the text, seals them once, and reads the text back as it was", async () => {
    const vault = envelopeVault(keys());
    const { text, sealed } = await sealFieldsAsOne(vault, TEXT, CLAIM, DICTIONARY);
    for (const words of ["It broke", "call me", "my words", "Anna"]) expect(text).not.toContain(words);
    expect(text).toContain("Validation passed"); // a code's reason is not the customer's
    expect(sealed).toMatch(/^pd2:A/);
    expect((await sealFieldsAsOne(vault, TEXT, CLAIM, DICTIONARY)).sealed).toBe(sealed);
    expect(await openFieldsAsOne(vault, text, sealed, CLAIM, DICTIONARY)).toBe(TEXT);
  });

  it("keeps a text with nothing personal, or without a vault, as it is", async () => {
    const plain = JSON.stringify({ checks: [{ name: "x", passed: true }] });
    expect(await sealFieldsAsOne(envelopeVault(keys()), plain, CLAIM, DICTIONARY)).toEqual({ text: plain });
    expect(await sealFieldsAsOne(undefined, TEXT, CLAIM, DICTIONARY)).toEqual({ text: TEXT });
  });

  it("reads every field [erased] once the claim's key is destroyed, and seals an erased claim's fields as [erased]", async () => {
    const vault = envelopeVault(keys(), { cacheKeys: false });
    const { text, sealed } = await sealFieldsAsOne(vault, TEXT, CLAIM, DICTIONARY);
    await vault.destroy(CLAIM);
    const erased = JSON.parse(await openFieldsAsOne(vault, text, sealed, CLAIM, DICTIONARY));
    expect(erased.audit[0].details).toEqual({ claim: { reason: ERASED, order_id: "ord_1" }, note: ERASED });
    expect(JSON.parse(erased.audit[2].event)).toEqual({ claim_text: ERASED, amount_eur: 42 });
    expect(erased.customer_name).toBe(ERASED);
    const late = await sealFieldsAsOne(vault, TEXT, CLAIM, DICTIONARY);
    expect(late.sealed).toBeUndefined();
    expect(late.text).toBe(JSON.stringify(erased));
  });

  it("refuses a token beside a text with other fields, of another claim, or without a vault shows the token", async () => {
    const vault = envelopeVault(keys());
    const { text, sealed } = await sealFieldsAsOne(vault, TEXT, CLAIM, DICTIONARY);
    const fewer = JSON.stringify({ ...JSON.parse(text), customer_name: undefined });
    await expect(openFieldsAsOne(vault, fewer, sealed, CLAIM, DICTIONARY)).rejects.toThrow(
      /the sealed fields of clm_0123.* are 4, its text has 3/,
    );
    await expect(openFieldsAsOne(vault, text, sealed, "clm_x", DICTIONARY)).rejects.toThrow(/of clm_x does not open/);
    const blind = JSON.parse(await openFieldsAsOne(undefined, text, sealed, CLAIM, DICTIONARY));
    expect(blind.customer_name).toBe(sealed);
  });
});
