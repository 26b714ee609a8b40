// What a model call costs (docs/llm.md, "Cost per claim"): a per-model price table in USD per million tokens, the
// operator's to change, and the pure functions that price token usage with it. Self-hosted models (Ollama, vLLM) and
// the rules model cost nothing per token; a model the table does not name is "unpriced", never silently free.
import * as z from "zod";
import { PriceTableError } from "./errors.ts";
import type { LlmUsage } from "./port.ts";

/** A model's list price per million tokens, in USD. */
const ModelPriceSchema = z
  .object({
    input_per_million: z.number().finite().nonnegative(),
    output_per_million: z.number().finite().nonnegative(),
  })
  .strict();

/** A model's price: a list price, or `self-hosted` (no price per token: its cost is the machine's). */
type ModelPrice = z.infer<typeof ModelPriceSchema> | "self-hosted";

/** The price table file: `models` by name (a dated snapshot `gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`). */
export const PriceTableSchema = z
  .object({
    currency: z.literal("USD").default("USD"),
    models: z.record(z.string().min(1), z.union([ModelPriceSchema, z.literal("self-hosted")])),
  })
  .strict();

/** A price table. */
export type PriceTable = { currency: "USD"; models: Record<string, ModelPrice> };

/** What the OpenAI Batch API takes off a model's list price, input and output alike (LLM_BATCH_MODE=batch). */
export const BATCH_API_DISCOUNT = 0.5;

/** A list price as the Batch API charges it. */
export function batchPrice<P extends z.infer<typeof ModelPriceSchema>>(price: P): P {
  return {
    ...price,
    input_per_million: price.input_per_million * (1 - BATCH_API_DISCOUNT),
    output_per_million: price.output_per_million * (1 - BATCH_API_DISCOUNT),
  };
}

/** The prices used when the operator gives no table: list prices of a few hosted models (USD per million tokens). */
export const DEFAULT_PRICE_TABLE: PriceTable = {
  currency: "USD",
  models: {
    "gpt-4o-mini": { input_per_million: 0.15, output_per_million: 0.6 },
    "gpt-4o": { input_per_million: 2.5, output_per_million: 10 },
    "gpt-4.1": { input_per_million: 2, output_per_million: 8 },
    "gpt-4.1-mini": { input_per_million: 0.4, output_per_million: 1.6 },
    "gpt-4.1-nano": { input_per_million: 0.1, output_per_million: 0.4 },
    "rules-v1": "self-hosted",
    "gemma3:4b": "self-hosted",
  },
};

/** Reads a price table from parsed YAML/JSON; the operator's models are added to (and override) the defaults. */
export function parsePriceTable(data: unknown, file: string): PriceTable {
  const parsed = PriceTableSchema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.length ? i.path.join(".") : "(file)"}: ${i.message}`)
      .join("; ");
    throw new PriceTableError(
      `${file}: not a model price table (${issues}); expected models: { <model>: { input_per_million, output_per_million } | self-hosted }`,
    );
  }
  return { currency: "USD", models: { ...DEFAULT_PRICE_TABLE.models, ...parsed.data.models } };
}

/** The price of `model`: its own entry, else that of the longest name it starts with followed by `-`; else nothing. */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  if (Object.hasOwn(table.models, model)) return table.models[model];
  const base = Object.keys(table.models)
    .filter((name) => model.startsWith(`${name}-`))
    .sort((a, b) => b.length - a.length)[0];
  return base === undefined ? undefined : table.models[base];
}

/** The cost of token usage at `price`, in USD. */
export function usageCostUsd(usage: Pick<LlmUsage, "prompt_tokens" | "completion_tokens">, price: ModelPrice): number {
  if (price === "self-hosted") return 0;
  return (usage.prompt_tokens * price.input_per_million + usage.completion_tokens * price.output_per_million) / 1e6;
}

/** What a set of calls cost: the priced part in USD, and how many calls named a model the table does not price. */
export type CallsCost = { usd: number; unpriced: number };

/** Prices calls (each with its model and usage); a call without usage costs nothing known and is not counted unpriced. */
export function callsCost(
  table: PriceTable,
  calls: readonly {
    model?: string | undefined;
    usage?: Pick<LlmUsage, "prompt_tokens" | "completion_tokens">;
    /** Made through the OpenAI Batch API: priced at its discount. */
    batch?: boolean | undefined;
  }[],
): CallsCost {
  let usd = 0;
  let unpriced = 0;
  for (const c of calls) {
    if (!c.usage) continue;
    const listed = c.model === undefined ? undefined : priceOf(table, c.model);
    const price = c.batch && typeof listed === "object" ? batchPrice(listed) : listed;
    if (price === undefined) unpriced++;
    else usd += usageCostUsd(c.usage, price);
  }
  return { usd, unpriced };
}
