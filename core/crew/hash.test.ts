import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ClaimsError } from "../errors.ts";
import { canonicalize, canonicalizeStable } from "./canonical.ts";
import { CanonicalJsonError } from "./errors.ts";
import { hashHex } from "./hash.ts";

describe("hashHex", () => {
  it("matches the FIPS 180-4 test vectors", () => {
    expect(hashHex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(hashHex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
  it("agrees with node:crypto on arbitrary unicode strings of every padding length", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (s) => {
        expect(hashHex(s)).toBe(createHash("sha256").update(s, "utf8").digest("hex"));
      }),
      { numRuns: 300 },
    );
  });
});

describe("canonicalize", () => {
  it("sorts keys at every depth and drops undefined members", () => {
    expect(canonicalize({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}',
    );
  });
  it("gives the same string for objects that differ only in key order", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalize(reversed)).toBe(canonicalize(obj));
        expect(JSON.parse(canonicalize(obj))).toEqual(JSON.parse(JSON.stringify(obj)));
      }),
    );
  });
  it("refuses non-finite numbers", () => {
    expect(() => canonicalize({ a: Number.NaN })).toThrow(CanonicalJsonError);
    expect(() => canonicalize({ a: Number.NaN })).toThrow(/non-finite/);
  });
  it("writes array holes and undefined items as null, as JSON.stringify does, so the result is valid JSON", () => {
    // eslint-disable-next-line no-sparse-arrays -- the hole is the point
    const sparse = [1, , 3];
    expect(canonicalize(sparse)).toBe("[1,null,3]");
    expect(canonicalize({ a: new Array(2), b: [undefined] })).toBe('{"a":[null,null],"b":[null]}');
    const holey: unknown[] = [];
    holey[3] = { z: 1, y: [] };
    expect(JSON.parse(canonicalize(holey))).toEqual(JSON.parse(JSON.stringify(holey)));
  });
  it("refuses a circular value with CanonicalJsonError instead of overflowing the stack", () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = { deeper: [a] };
    expect(() => canonicalize(a)).toThrow(CanonicalJsonError);
    expect(() => canonicalize(a)).toThrow(/circular/);
    const list: unknown[] = [1];
    list.push(list);
    let err: unknown;
    try {
      canonicalize(list);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClaimsError);
    expect((err as ClaimsError).code).toBe("NOT_CANONICAL_JSON");
  });
  it("accepts the same object twice when it is shared, not circular", () => {
    const shared = { k: 1 };
    expect(canonicalize({ a: shared, b: [shared, shared] })).toBe('{"a":{"k":1},"b":[{"k":1},{"k":1}]}');
  });
});

describe("canonicalizeStable", () => {
  it("gives canonicalize's string for each value, remembered per object", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const [x, y] = [{ v: a }, { v: b }];
        expect(canonicalizeStable(x)).toBe(canonicalize(x));
        expect(canonicalizeStable(y)).toBe(canonicalize(y));
        expect(canonicalizeStable(x)).toBe(canonicalize(x));
      }),
      { numRuns: 200 },
    );
    expect(canonicalizeStable("s")).toBe('"s"');
    expect(canonicalizeStable(null)).toBe("null");
  });
});
