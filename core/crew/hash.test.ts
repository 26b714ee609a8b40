import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalize } from "./canonical.ts";
import { hashHex } from "./hash.ts";

describe("hashHex", () => {
  it("matches the FIPS 180-4 test vectors", () => {
    expect(hashHex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(hashHex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
  it("agrees with node:crypto on arbitrary unicode strings of every padding length", () => {
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 300 }), (s) => {
      expect(hashHex(s)).toBe(createHash("sha256").update(s, "utf8").digest("hex"));
    }), { numRuns: 300 });
  });
});

describe("canonicalize", () => {
  it("sorts keys at every depth and drops undefined members", () => {
    expect(canonicalize({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe('{"a":{"d":[1,{"x":1,"y":2}]},"b":1}');
  });
  it("gives the same string for objects that differ only in key order", () => {
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
      const reversed = Object.fromEntries(Object.entries(obj).reverse());
      expect(canonicalize(reversed)).toBe(canonicalize(obj));
      expect(JSON.parse(canonicalize(obj))).toEqual(JSON.parse(JSON.stringify(obj)));
    }));
  });
  it("refuses non-finite numbers", () => {
    expect(() => canonicalize({ a: Number.NaN })).toThrow(/non-finite/);
  });
});
