// The stored-text codec: which form packText picks (plain, deflate with the preset dictionary) by write
// units, round trips, the forms written before (gzip, brotli) still read, and item sizes that agree with
// what the emulator bills.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { measureCapacity } from "./capacity.test-kit.ts";
import { itemBytes, packText, unpackText, writeUnits } from "./compact.ts";
import { COMPACT_DICTIONARY_V1 } from "./compact-dictionary-v1.ts";
import { COMPACT_DICTIONARY_V2 } from "./compact-dictionary-v2.ts";
import { randomText } from "./contract.test-kit.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";

const aws = useEmulatedAws();

const CLAIM = JSON.parse(readFileSync(new URL("./fixtures/structured-claim.json", import.meta.url), "utf8")) as {
  sessions: { snapshot: unknown; outbox: unknown }[];
};
/**
 * The second session body of a real claim of the two-agent crew: 3.1 KB of JSON, gzip ≈ 1 000 bytes, brotli ≈ 800,
 * dictionary v1 ≈ 230, v2 ≈ 450 (v2 is built from the compact crew, the default since issue 37: its own step bodies
 * take 270–300 bytes with v2, 330–340 with v1).
 */
const SESSION_V2 = JSON.stringify({ snapshot: CLAIM.sessions[1]!.snapshot, outbox: CLAIM.sessions[1]!.outbox });

describe("packText", () => {
  it.each([
    { label: "a short text stays plain", text: '{"n":1}', rest: 100, codec: "json" },
    {
      label: "a 900-byte text whose item fits one unit stays plain",
      text: JSON.stringify({ s: "word ".repeat(175) }),
      rest: 60,
      codec: "json",
    },
    {
      label: "a 900-byte text is compressed when that saves a unit",
      text: JSON.stringify({ s: "word ".repeat(175) }),
      rest: 300,
      codec: "dict",
    },
    {
      label: "a text over 1 KB is compressed even within one unit (storage)",
      text: JSON.stringify({ s: "ab".repeat(600) }),
      rest: 0,
      codec: "dict",
    },
    { label: "base64 over 1 KB is compressed (a quarter smaller)", text: randomText(3000), rest: 100, codec: "dict" },
    { label: "a real session body is compressed", text: SESSION_V2, rest: 600, codec: "dict" },
  ])("$label", async ({ text, rest, codec }) => {
    const packed = await packText("body", text, rest);
    expect(packed.codec).toBe(codec);
    expect(packed.attribute).toBe({ json: "body", dict: "body_z2" }[codec]);
    expect(packed.bytes).toBe(itemBytes({ [packed.attribute]: packed.value }));
    expect(await unpackText({ [packed.attribute]: packed.value }, "body")).toBe(text);
  });

  it("fits a real 3.1 KB session body in one write unit, where gzip and brotli take 1 000 and 800 bytes", async () => {
    const packed = await packText("body", SESSION_V2, 90);
    expect(packed.bytes).toBeLessThan(500);
    expect(gzipSync(SESSION_V2).byteLength).toBeGreaterThan(900);
    expect(writeUnits(90 + packed.bytes)).toBe(1);
  });

  it("keeps a text plain when compressing would only make it larger", async () => {
    expect((await packText("body", randomText(40), 0, { compressOverBytes: 0, minCompressBytes: 0 })).codec).toBe(
      "json",
    );
  });

  it("never picks a form that costs more write units than plain text", async () => {
    for (const [text, rest] of [
      [SESSION_V2, 0],
      [SESSION_V2, 900],
      [randomText(5000), 10],
      ["x".repeat(2000), 1000],
    ] as const) {
      const packed = await packText("body", text, rest);
      expect(writeUnits(rest + packed.bytes)).toBeLessThanOrEqual(writeUnits(rest + itemBytes({ body: text })));
    }
  });
});

describe("unpackText", () => {
  it("answers undefined when the item has no such attribute", async () => {
    expect(await unpackText({ other: "x" }, "body")).toBeUndefined();
  });

  it("reads the gzip and brotli forms written before the dictionary", async () => {
    expect(await unpackText({ body_gz: new Uint8Array(gzipSync(SESSION_V2)) }, "body")).toBe(SESSION_V2);
    expect(await unpackText({ body_br: new Uint8Array(brotliCompressSync(SESSION_V2)) }, "body")).toBe(SESSION_V2);
  });

  it("still reads a value stored with dictionary v1, whose text is frozen (stored items need it byte for byte)", async () => {
    expect(createHash("sha256").update(COMPACT_DICTIONARY_V1).digest("hex")).toBe(
      "72cabdfafc73873e4afc2343523cc92bd90a851a9a077aba2b6a03a9365020af",
    );
    const stored = new Uint8Array(Buffer.from("qya5Z447dxdk5uWBPUJG97i2FgA=", "base64"));
    expect(await unpackText({ body_z1: stored }, "body")).toBe(
      '{"event_type":"KERNEL_VERDICT","severity":"INFO","details":{"claim_id":"clm_pinned","verdict":"ACCEPT","reason_code":"VALIDATION_PASSED"}}',
    );
  });

  it("reads a value stored with dictionary v2, the one written now, whose text is frozen too", async () => {
    expect(createHash("sha256").update(COMPACT_DICTIONARY_V2).digest("hex")).toBe(
      "d85d40adb04f0ffc1a96f7cb75493ca738bca88c67caac7da40e6da4962e229e",
    );
    const text =
      '{"event_type":"KERNEL_VERDICT","severity":"INFO","details":{"claim_id":"clm_pinned","verdict":"ACCEPT","reason_code":"VALIDATION_PASSED","policy_version":"pol_4eaae725b607b687"}}';
    const stored = new Uint8Array(Buffer.from("qya55YY7kgoy8/LAyZqs5hNxjYzaWgA=", "base64"));
    expect(await unpackText({ body_z2: stored }, "body")).toBe(text);
    const packed = await packText("body", text, 0, { compressOverBytes: 0, minCompressBytes: 0 });
    expect(packed.attribute).toBe("body_z2");
    expect(Buffer.from(packed.value as Uint8Array).toString("base64")).toBe("qya55YY7kgoy8/LAyZqs5hNxjYzaWgA=");
  });
});

describe("itemBytes", () => {
  it.each([1024, 1025, 2048, 2049])(
    "agrees with the write units the emulator bills for a %i-byte item",
    async (size) => {
      const tableName = await aws.newTable();
      const base = { pk: "P#1", sk: "S", n: 12345, flag: true, list: ["a", 1] };
      const item = { ...base, pad: "x".repeat(size - itemBytes({ ...base, pad: "" })) };
      expect(itemBytes(item)).toBe(size);
      const { capacity } = await measureCapacity(aws.doc, () =>
        aws.doc.send(new PutCommand({ TableName: tableName, Item: item })),
      );
      expect(capacity.wru).toBe(writeUnits(size));
    },
  );
});
