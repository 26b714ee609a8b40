// The stored-text codec: which form packText picks (plain, gzip, brotli) by write units, round trips,
// and item sizes that agree with what the emulator bills.
import { readFileSync } from "node:fs";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { measureCapacity } from "./capacity.test-kit.ts";
import { itemBytes, packText, unpackText, writeUnits } from "./compact.ts";
import { randomText } from "./contract.test-kit.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";

const aws = useEmulatedAws();

const CLAIM = JSON.parse(readFileSync(new URL("./fixtures/structured-claim.json", import.meta.url), "utf8")) as { sessions: { snapshot: unknown; outbox: unknown }[] };
/** The second session body of a real claim: 3.1 KB of JSON, gzip ≈ 1 000 bytes, brotli ≈ 800. */
const SESSION_V2 = JSON.stringify({ snapshot: CLAIM.sessions[1]!.snapshot, outbox: CLAIM.sessions[1]!.outbox });

describe("packText", () => {
  it.each([
    { label: "a short text stays plain", text: '{"n":1}', rest: 100, codec: "json" },
    { label: "a 900-byte text whose item fits one unit stays plain", text: JSON.stringify({ s: "word ".repeat(175) }), rest: 60, codec: "json" },
    { label: "a 900-byte text is gzipped when that saves a unit", text: JSON.stringify({ s: "word ".repeat(175) }), rest: 300, codec: "gzip" },
    { label: "a text over 1 KB is gzipped even within one unit (storage)", text: JSON.stringify({ s: "ab".repeat(600) }), rest: 0, codec: "gzip" },
    { label: "base64 over 1 KB is gzipped (a quarter smaller)", text: randomText(3000), rest: 100, codec: "gzip" },
    { label: "a real session body goes to brotli to end one unit lower", text: SESSION_V2, rest: 90, codec: "br" },
    { label: "a real session body stays gzip when brotli cannot cross a unit", text: SESSION_V2, rest: 600, codec: "gzip" },
  ])("$label", async ({ text, rest, codec }) => {
    const packed = await packText("body", text, rest);
    expect(packed.codec).toBe(codec);
    expect(packed.attribute).toBe({ json: "body", gzip: "body_gz", br: "body_br" }[codec]);
    expect(packed.bytes).toBe(itemBytes({ [packed.attribute]: packed.value }));
    expect(await unpackText({ [packed.attribute]: packed.value }, "body")).toBe(text);
  });

  it("keeps a text plain when compressing would only make it larger", async () => {
    expect((await packText("body", randomText(40), 0, { compressOverBytes: 0, minCompressBytes: 0 })).codec).toBe("json");
  });

  it("never picks a form that costs more write units than plain text", async () => {
    for (const [text, rest] of [[SESSION_V2, 0], [SESSION_V2, 900], [randomText(5000), 10], ["x".repeat(2000), 1000]] as const) {
      const packed = await packText("body", text, rest);
      expect(writeUnits(rest + packed.bytes)).toBeLessThanOrEqual(writeUnits(rest + itemBytes({ body: text })));
    }
  });
});

describe("unpackText", () => {
  it("answers undefined when the item has no such attribute", async () => {
    expect(await unpackText({ other: "x" }, "body")).toBeUndefined();
  });
});

describe("itemBytes", () => {
  it.each([1024, 1025, 2048, 2049])("agrees with the write units the emulator bills for a %i-byte item", async (size) => {
    const tableName = await aws.newTable();
    const base = { pk: "P#1", sk: "S", n: 12345, flag: true, list: ["a", 1] };
    const item = { ...base, pad: "x".repeat(size - itemBytes({ ...base, pad: "" })) };
    expect(itemBytes(item)).toBe(size);
    const { capacity } = await measureCapacity(aws.doc, () => aws.doc.send(new PutCommand({ TableName: tableName, Item: item })));
    expect(capacity.wru).toBe(writeUnits(size));
  });
});
