import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ClaimExtractionOutputSchema } from "../../core/claim/proposal-output.ts";
import { LlmSchemaNotStrictError } from "../../core/llm/errors.ts";
import { toStrictJsonSchema } from "./strict-schema.ts";

describe("toStrictJsonSchema", () => {
  it("turns nullable fields into required type unions, without $schema", () => {
    expect(toStrictJsonSchema("claim_extraction", ClaimExtractionOutputSchema)).toEqual({
      type: "object",
      properties: {
        order_id: { type: ["string", "null"] },
        amount_eur: { type: ["number", "null"] },
        category: { type: ["string", "null"] },
        reason: { type: "string" },
        purchase_date: { type: ["string", "null"] },
        currency: { type: ["string", "null"] },
        items: {
          anyOf: [
            {
              type: "array",
              items: {
                type: "object",
                properties: { name: { type: "string" }, quantity: { type: ["number", "null"] } },
                required: ["name", "quantity"],
                additionalProperties: false,
              },
            },
            { type: "null" },
          ],
        },
      },
      required: ["order_id", "amount_eur", "category", "reason", "purchase_date", "currency", "items"],
      additionalProperties: false,
    });
  });

  it("closes nested objects and drops length keywords", () => {
    const schema = z.object({
      outer: z.object({ name: z.string().min(1).max(5) }),
      list: z.array(z.object({ n: z.number() })),
    });
    const json = toStrictJsonSchema("nested", schema) as { properties: Record<string, Record<string, unknown>> };
    expect(json.properties["outer"]).toEqual({
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: false,
    });
    expect(json.properties["list"]?.["items"]).toEqual({
      type: "object",
      properties: { n: { type: "number" } },
      required: ["n"],
      additionalProperties: false,
    });
  });

  const refused: Array<[string, string, z.ZodType, RegExp]> = [
    [
      "an optional field",
      "x",
      z.object({ a: z.string(), b: z.string().optional() }),
      /field 'b' is optional.*\.nullable\(\)/,
    ],
    [
      "a nested optional field",
      "x",
      z.object({ o: z.object({ c: z.number().optional() }) }),
      /field 'o\.c' is optional/,
    ],
    ["a record", "x", z.object({ r: z.record(z.string(), z.number()) }), /arbitrary extra keys/],
    ["a non-object root", "x", z.string(), /root must be an object/],
    ["a bad name", "has space", z.object({}), /name must be/],
  ];
  it.each(refused)("refuses %s", (_name, name, schema, message) => {
    expect(() => toStrictJsonSchema(name, schema)).toThrow(LlmSchemaNotStrictError);
    expect(() => toStrictJsonSchema(name, schema)).toThrow(message);
  });
});
