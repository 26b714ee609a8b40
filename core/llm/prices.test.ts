import { describe, expect, it } from "vitest";
import { PriceTableError } from "./errors.ts";
import { batchPrice, callsCost, DEFAULT_PRICE_TABLE, parsePriceTable, priceOf, usageCostUsd } from "./prices.ts";

describe("the model price table", () => {
  it("prices tokens per million, a dated snapshot as its model, self-hosted at zero, an unknown model not at all", () => {
    expect(
      usageCostUsd({ prompt_tokens: 1_000_000, completion_tokens: 500_000 }, priceOf(DEFAULT_PRICE_TABLE, "gpt-4.1")!),
    ).toBe(6);
    expect(priceOf(DEFAULT_PRICE_TABLE, "gpt-4o-mini-2024-07-18")).toEqual(DEFAULT_PRICE_TABLE.models["gpt-4o-mini"]);
    expect(priceOf(DEFAULT_PRICE_TABLE, "gpt-4.1-mini")).toEqual({ input_per_million: 0.4, output_per_million: 1.6 });
    expect(priceOf(DEFAULT_PRICE_TABLE, "rules-v1")).toBe("self-hosted");
    expect(priceOf(DEFAULT_PRICE_TABLE, "claude-x")).toBeUndefined();
    const usage = { prompt_tokens: 550, completion_tokens: 35 };
    expect(
      callsCost(DEFAULT_PRICE_TABLE, [
        { model: "gpt-4o-mini", usage },
        { model: "rules-v1", usage },
        { model: "claude-x", usage },
      ]),
    ).toEqual({ usd: (550 * 0.15 + 35 * 0.6) / 1e6, unpriced: 1 });
  });

  it("takes the operator's models over the defaults, and refuses a file that is not a table, naming it", () => {
    const table = parsePriceTable(
      { models: { "gpt-4o-mini": { input_per_million: 1, output_per_million: 2 }, mine: "self-hosted" } },
      "p.yaml",
    );
    expect(table.models["gpt-4o-mini"]).toEqual({ input_per_million: 1, output_per_million: 2 });
    expect(table.models.mine).toBe("self-hosted");
    expect(table.models["gpt-4.1"]).toEqual(DEFAULT_PRICE_TABLE.models["gpt-4.1"]);
    expect(() =>
      parsePriceTable({ models: { x: { input_per_million: -1, output_per_million: 0 } } }, "p.yaml"),
    ).toThrow(PriceTableError);
    expect(() => parsePriceTable("nonsense", "p.yaml")).toThrow(/p\.yaml: not a model price table/);
  });

  it("prices a Batch API call at half the list price, input and output", () => {
    const list = { input_per_million: 0.15, output_per_million: 0.6 };
    expect(batchPrice(list)).toEqual({ input_per_million: 0.075, output_per_million: 0.3 });
    expect(usageCostUsd({ prompt_tokens: 1_000_000, completion_tokens: 500_000 }, batchPrice(list))).toBeCloseTo(
      0.225,
      10,
    );
    expect(list).toEqual({ input_per_million: 0.15, output_per_million: 0.6 });
  });
});
