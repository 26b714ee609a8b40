// The sealed field's two forms (issue 37): pd2, written now — the subject packed (a claim id in 16 bytes) or left to the
// record that holds it — and pd1, written before, which still opens. Same cipher, same synthetic IV: one text of one
// claim is one token per form, a token moved to another claim or record does not open, and a forged one neither.
import { describe, expect, it } from "vitest";
import { isSealed } from "../../core/privacy/sealing.ts";
import { SealedFieldError } from "../../pipeline/errors.ts";
import { envelopeVault } from "./envelope.ts";
import type { DataKeyStore } from "./envelope.ts";

/** Keys fixed per subject (the pd1 fixtures were sealed under `Buffer.alloc(32, 7)` by the vault of 310c73a). */
function fixedKeys(): DataKeyStore {
  const erased = new Set<string>();
  return {
    key: async (subject) =>
      erased.has(subject) ? { state: "erased" } : { state: "key", key: Buffer.alloc(32, subject === "clm_x" ? 8 : 7) },
    destroy: async (subject) => (erased.add(subject), "destroyed"),
  };
}

const CLAIM = "clm_0123456789abcdef0123456789abcdef";
const REASON = "The screen is dead on arrival";
const PD1_CLAIM =
  "pd1:Y2xtXzAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm:ULyjvEpCBWNe2QFO:es4cf9U_qxA1aEV5MUjqQmDxfE914c3aKPlQfME:Twz5qhCLH2dGZ8BM7J3j1Q";
const PD1_OTHER = "pd1:Y2xtX2ZpeHR1cmU:Pxd_mCGBMUTCnoeY:nyPUho2cFtmyJNXMDkLYcneU:TtGiH80XiUAKiQpa6u8Qgw";

/** A pd2 token's bytes after its prefix. */
const bytesOf = (token: string) => Buffer.from(token.slice(4), "base64url");
const pd2 = (bytes: Buffer) => `pd2:${bytes.toString("base64url")}`;
const B64U = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** `token` with its last character's unused low bits set: it decodes to the same bytes (its length is not 4n). */
const nonCanonical = (token: string) => `${token.slice(0, -1)}${B64U[B64U.indexOf(token.at(-1)!) | 1]}`;

describe("the sealed field's forms", () => {
  it("opens a pd1 token written before, and writes the same text as pd2 with the same IV, ciphertext and tag", async () => {
    const vault = envelopeVault(fixedKeys());
    expect(await vault.open(PD1_CLAIM)).toBe(REASON);
    expect(await vault.open(PD1_OTHER)).toBe("Mein Name ist Anna");
    const token = await vault.seal(CLAIM, REASON);
    expect(token).toMatch(/^pd2:A/);
    expect(isSealed(token)).toBe(true);
    const [, , iv, ct, tag] = PD1_CLAIM.split(":").map((p) => Buffer.from(p, "base64url"));
    // header 1 (a claim id), the id's 16 bytes, then pd1's parts.
    expect(bytesOf(token)).toEqual(Buffer.concat([Buffer.of(1), Buffer.from(CLAIM.slice(4), "hex"), iv!, ct!, tag!]));
    expect(PD1_CLAIM.length - token.length).toBe(29);
    expect(await vault.open(token)).toBe(REASON);
  });

  it("keeps a pd1 token of the subject as it is (a record read sealed and written again)", async () => {
    const vault = envelopeVault(fixedKeys());
    expect(await vault.seal(CLAIM, PD1_CLAIM)).toBe(PD1_CLAIM);
    expect(await vault.seal(CLAIM, PD1_CLAIM, { implied: true })).toBe(PD1_CLAIM);
  });

  it("seals one text of one claim to one token per form, and other subjects with their UTF-8 bytes", async () => {
    const vault = envelopeVault(fixedKeys());
    const implied = await vault.seal(CLAIM, REASON, { implied: true });
    expect(implied).toBe(await vault.seal(CLAIM, REASON, { implied: true }));
    expect(await vault.seal(CLAIM, REASON)).toBe(await vault.seal(CLAIM, REASON));
    expect(PD1_CLAIM.length - implied.length).toBe(50);
    expect(bytesOf(implied)[0]).toBe(0);
    // A token of the subject handed back comes back in the form asked for.
    expect(await vault.seal(CLAIM, implied)).toBe(await vault.seal(CLAIM, REASON));
    expect(await vault.seal(CLAIM, await vault.seal(CLAIM, REASON), { implied: true })).toBe(implied);
    const other = await vault.seal("unattributed", REASON);
    expect(bytesOf(other).subarray(0, 14)).toEqual(Buffer.concat([Buffer.of(2, 12), Buffer.from("unattributed")]));
    expect(await vault.open(other)).toBe(REASON);
    // A subject pd2 cannot hold (over 255 bytes) is sealed as pd1, as before.
    const long = `clm_${"x".repeat(300)}`;
    const pd1 = await vault.seal(long, REASON);
    expect(pd1.startsWith(`pd1:${Buffer.from(long).toString("base64url")}:`)).toBe(true);
    expect(await vault.open(pd1)).toBe(REASON);
  });

  it("opens a token that leaves its claim to the record only with the record's claim", async () => {
    const vault = envelopeVault(fixedKeys());
    const implied = await vault.seal(CLAIM, REASON, { implied: true });
    expect(await vault.open(implied, CLAIM)).toBe(REASON);
    await expect(vault.open(implied)).rejects.toThrow(/without the record's claim/);
    // Moved to another claim's record: the other key and claim do not authenticate it.
    await expect(vault.open(implied, "clm_x")).rejects.toThrow(/a sealed field of clm_x does not open/);
    // A token that names its claim ignores the record's.
    expect(await vault.open(await vault.seal(CLAIM, REASON), "clm_x")).toBe(REASON);
  });

  it("refuses a pd2 token moved to another subject, one with a forged tag, and malformed ones", async () => {
    const vault = envelopeVault(fixedKeys());
    const bytes = bytesOf(await vault.seal(CLAIM, REASON));
    const moved = Buffer.from(bytes);
    moved[16] = (moved[16] ?? 0) ^ 1; // another claim id
    await expect(vault.open(pd2(moved))).rejects.toBeInstanceOf(SealedFieldError);
    const forged = Buffer.from(bytes);
    forged[forged.length - 1] = (forged[forged.length - 1] ?? 0) ^ 1;
    await expect(vault.open(pd2(forged))).rejects.toThrow(/does not open with its key/);
    for (const malformed of [
      "pd2:abc",
      pd2(Buffer.concat([Buffer.of(4), bytes.subarray(1)])), // unknown header
      pd2(Buffer.concat([Buffer.of(2, 200), bytes.subarray(2)])), // subject longer than the token
      pd2(Buffer.alloc(28)), // shorter than a header, an IV and a tag
      nonCanonical(pd2(bytes)), // the same bytes, spelled otherwise
    ])
      await expect(vault.open(malformed)).rejects.toThrow(/not a sealed field/);
  });

  it("seals a forged pd2 token as a customer's text, never keeps it, and reads it back as written", async () => {
    const vault = envelopeVault(fixedKeys());
    const theirs = await vault.seal("clm_x", "another claim's words", { implied: true });
    const forged = pd2(Buffer.concat([bytesOf(theirs).subarray(0, -1), Buffer.of(0)]));
    for (const text of [theirs, forged, "pd2:abc"]) {
      const sealed = await vault.seal(CLAIM, text, { implied: true });
      expect(sealed).not.toBe(text);
      expect(await vault.open(sealed, CLAIM)).toBe(text);
    }
  });

  it("reads an erased claim's tokens of every form as gone", async () => {
    const store = fixedKeys();
    const vault = envelopeVault(store, { cacheKeys: false });
    const implied = await vault.seal(CLAIM, REASON, { implied: true });
    const named = await vault.seal(CLAIM, REASON);
    await vault.destroy(CLAIM);
    for (const token of [PD1_CLAIM, named]) expect(await vault.open(token)).toBeUndefined();
    expect(await vault.open(implied, CLAIM)).toBeUndefined();
  });
});

describe("the deflated form (header 3, i37v: a verdict's personal fields as one token)", () => {
  const RECORD = Buffer.from('{"verdict":"ACCEPT","order_id":"ord_bs000001","amount_eur":299.99}');
  const FIELDS = JSON.stringify([
    REASON,
    "Refund 299.99 EUR for order ord_bs000001 (electronics): the screen is dead.",
  ]);

  it("deflates against the record's dictionary: what the record holds costs next to nothing, and the token repeats", async () => {
    const vault = envelopeVault(fixedKeys());
    const token = await vault.seal(CLAIM, FIELDS, { implied: true, dictionary: RECORD });
    expect(isSealed(token)).toBe(true);
    expect(bytesOf(token)[0]).toBe(3);
    expect(token).toBe(await vault.seal(CLAIM, FIELDS, { implied: true, dictionary: RECORD }));
    const plain = await vault.seal(CLAIM, FIELDS, { implied: true });
    expect(bytesOf(token).length).toBeLessThan(bytesOf(plain).length - 25);
    expect(await vault.open(token, CLAIM, { dictionary: RECORD })).toBe(FIELDS);
    // Handed back with its dictionary, it is kept as it is.
    expect(await vault.seal(CLAIM, token, { implied: true, dictionary: RECORD })).toBe(token);
  });

  it("opens only with its claim and its very dictionary, with a clear error otherwise", async () => {
    const vault = envelopeVault(fixedKeys());
    const token = await vault.seal(CLAIM, FIELDS, { implied: true, dictionary: RECORD });
    await expect(vault.open(token, CLAIM)).rejects.toThrow(/deflated against its record was read without the record/);
    const other = Buffer.from(RECORD.toString().replace("299.99", "299.98"));
    await expect(vault.open(token, CLAIM, { dictionary: other })).rejects.toThrow(/of clm_0123.* does not open/);
    await expect(vault.open(token, "clm_x", { dictionary: RECORD })).rejects.toThrow(/of clm_x does not open/);
    const forged = bytesOf(token);
    forged[20] = (forged[20] ?? 0) ^ 1;
    await expect(vault.open(pd2(forged), CLAIM, { dictionary: RECORD })).rejects.toBeInstanceOf(SealedFieldError);
    await expect(vault.seal(CLAIM, FIELDS, { dictionary: RECORD })).rejects.toThrow(/must leave its claim to it/);
    // Handed back without its dictionary, it is a customer's text like any other: sealed, and read back as written.
    const resealed = await vault.seal(CLAIM, token, { implied: true });
    expect(await vault.open(resealed, CLAIM)).toBe(token);
  });

  it("reads as gone once the claim's key is destroyed", async () => {
    const vault = envelopeVault(fixedKeys(), { cacheKeys: false });
    const token = await vault.seal(CLAIM, FIELDS, { implied: true, dictionary: RECORD });
    await vault.destroy(CLAIM);
    expect(await vault.open(token, CLAIM, { dictionary: RECORD })).toBeUndefined();
    expect(await vault.seal(CLAIM, FIELDS, { implied: true, dictionary: RECORD })).toBe("[erased]");
  });
});
