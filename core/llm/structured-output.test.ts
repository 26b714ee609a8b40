import { describe, expect, it } from "vitest";
import * as z from "zod";
import { parseJsonFromText, readStructuredOutput } from "./structured-output.ts";

describe("parseJsonFromText", () => {
  const rows: Array<[string, string, unknown, string]> = [
    ["whole text", '{"a": 1}', { a: 1 }, "whole"],
    ["whole text with whitespace", '\n  {"a": 1}\n', { a: 1 }, "whole"],
    ["a json fence", 'Sure:\n```json\n{"a": 2}\n```', { a: 2 }, "fenced"],
    ["a json fence before another fence", '```\nnot json\n```\n```json\n{"a": 3}\n```', { a: 3 }, "fenced"],
    ["an unlabelled fence", '```\n{"a": 4}\n```', { a: 4 }, "fenced"],
    ["prose around an object", 'My answer is {"a": {"b": "}"}} as requested.', { a: { b: "}" } }, "embedded"],
    ["an object after a broken brace", 'I think {maybe} this: {"a": 5}', { a: 5 }, "embedded"],
    ["escaped quotes inside strings", 'x {"a": "say \\"}\\" please"} y', { a: 'say "}" please' }, "embedded"],
  ];
  it.each(rows)("finds JSON in %s", (_name, text, value, source) => {
    expect(parseJsonFromText(text)).toEqual({ ok: true, value, source });
  });

  it.each(["", "no json here", '{"a": 1', "{not: json}"])("reports no JSON in %j", (text) => {
    expect(parseJsonFromText(text).ok).toBe(false);
  });
});

describe("readStructuredOutput", () => {
  const schema = { name: "thing", zod: z.object({ n: z.number(), s: z.string() }).strict() };

  it("validates the parsed value", () => {
    expect(readStructuredOutput('{"n": 1, "s": "x"}', schema)).toEqual({
      ok: true,
      value: { n: 1, s: "x" },
      source: "whole",
    });
  });

  it("names every offending field of a schema violation", () => {
    const r = readStructuredOutput('{"n": "1", "extra": true}', schema);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe("LLM_SCHEMA_VIOLATION");
      expect(r.message).toMatch(/n: /);
      expect(r.message).toMatch(/s: /);
      expect(r.message).toMatch(/extra/);
    }
  });

  it("tells empty, non-JSON and invalid answers apart", () => {
    expect(readStructuredOutput("  ", schema)).toMatchObject({ ok: false, code: "LLM_EMPTY_RESPONSE" });
    expect(readStructuredOutput("refund it", schema)).toMatchObject({ ok: false, code: "LLM_INVALID_JSON" });
  });
});
