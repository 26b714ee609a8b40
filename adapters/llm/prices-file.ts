// The model price table calls are priced with (the CLI, and the functions' LlmCallCost metric) (docs/llm.md): CLAIMS_MODEL_PRICES_FILE names the operator's YAML
// file, else the built-in defaults. A file that is missing or not a price table is a configuration error (exit 2).
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { PriceTableError } from "../../core/llm/errors.ts";
import { DEFAULT_PRICE_TABLE, parsePriceTable } from "../../core/llm/prices.ts";
import type { PriceTable } from "../../core/llm/prices.ts";

/** The price table of `env` (CLAIMS_MODEL_PRICES_FILE), read and checked; throws `PriceTableError`. */
export function loadPriceTable(env: NodeJS.ProcessEnv = process.env): PriceTable {
  const file = env.CLAIMS_MODEL_PRICES_FILE;
  if (file === undefined || file === "") return DEFAULT_PRICE_TABLE;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new PriceTableError(`CLAIMS_MODEL_PRICES_FILE ${file}: cannot read it (${(cause as Error).message})`);
  }
  let data: unknown;
  try {
    data = parse(text);
  } catch (cause) {
    throw new PriceTableError(`${file}: not valid YAML (${(cause as Error).message.split("\n")[0]})`);
  }
  return parsePriceTable(data, file);
}
