import { describe, expect, it } from "vitest";
import { createAuditEvent } from "../integrity/audit.ts";
import { DEFAULT_PRICE_TABLE } from "../llm/prices.ts";
import { formatModelCost, modelCost } from "./model-cost.ts";

const at = "2026-06-01T12:00:00.000Z";
const event = (type: string, details: Record<string, unknown>) =>
  createAuditEvent({ dfid: "d", rootDfid: "d", type: type as never, severity: "INFO", state: "RUNNING", details, at });
const usage = (p: number, c: number) => ({
  prompt_tokens: p,
  completion_tokens: c,
  total_tokens: p + c,
  estimated: false,
});

describe("model cost of a run", () => {
  it("counts every call (a repair round as two), sums tokens and prices them per claim", () => {
    const s = modelCost(
      [
        event("CLAIM_RECEIVED", { claim_id: "a" }),
        event("CLAIM_RECEIVED", { claim_id: "b" }),
        event("CLAIM_EXTRACTED", { claim_id: "a", model: "gpt-4o-mini", usage: usage(400, 40) }),
        event("LLM_CALL", { claim_id: "a", model: "gpt-4o-mini", usage: usage(500, 100) }),
        event("LLM_CALL", { claim_id: "a", model: "gpt-4o-mini", calls: 2, usage: usage(1100, 60) }),
      ],
      DEFAULT_PRICE_TABLE,
    );
    expect(s).toMatchObject({ claims: 2, calls: 4, promptTokens: 2000, completionTokens: 200, unpriced: 0 });
    expect(s.usd).toBeCloseTo((2000 * 0.15 + 200 * 0.6) / 1e6, 12);
    expect(formatModelCost(s)).toContain(
      "4 calls for 2 claims (2.00 per claim), 1000 prompt + 100 completion tokens per claim",
    );
  });

  it("prices a call made through the Batch API (via: batch) at half the list price, the others at list", () => {
    const s = modelCost(
      [
        event("CLAIM_RECEIVED", { claim_id: "a" }),
        event("CLAIM_EXTRACTED", { claim_id: "a", model: "gpt-4o-mini", usage: usage(1000, 100), via: "batch" }),
        event("LLM_CALL", { claim_id: "a", model: "gpt-4o-mini", usage: usage(1000, 100), via: "batch" }),
        event("LLM_CALL", { claim_id: "a", model: "gpt-4o-mini", usage: usage(1000, 100) }),
      ],
      DEFAULT_PRICE_TABLE,
    );
    const list = (1000 * 0.15 + 100 * 0.6) / 1e6;
    expect(s).toMatchObject({ calls: 3, promptTokens: 3000, unpriced: 0 });
    expect(s.usd).toBeCloseTo(list + list / 2 + list / 2, 12);
  });
});
