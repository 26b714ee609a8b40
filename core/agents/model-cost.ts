// Model calls, tokens and cost per claim from a run's audit (docs/llm.md, "Cost per claim"): every LLM_CALL of the
// crew and the extraction's call (CLAIM_EXTRACTED / CLAIM_EXTRACTION_FAILED), priced with a price table.
import type { AuditEvent } from "../integrity/audit.ts";
import { callsCost } from "../llm/prices.ts";
import type { PriceTable } from "../llm/prices.ts";

/** What the model cost a set of claims. */
export type ModelCostSummary = {
  claims: number;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  usd: number;
  /** Calls whose model the price table does not name (their cost is not in `usd`). */
  unpriced: number;
  models: string[];
};

const CALL_EVENTS = new Set(["LLM_CALL", "CLAIM_EXTRACTED", "CLAIM_EXTRACTION_FAILED"]);

/** Calls, tokens and cost of the claims in `events` (a claim counts once it is received). */
export function modelCost(events: readonly AuditEvent[], prices: PriceTable): ModelCostSummary {
  const claims = new Set<string>();
  const calls: { model?: string; usage?: { prompt_tokens: number; completion_tokens: number }; batch?: boolean }[] = [];
  const models = new Set<string>();
  let count = 0;
  for (const e of events) {
    if (e.event_type === "CLAIM_RECEIVED") claims.add(String(e.details.claim_id));
    if (!CALL_EVENTS.has(e.event_type)) continue;
    // Free text the patterns read alone made no model call.
    if ((e.details as { source?: unknown }).source === "patterns") continue;
    const d = e.details as { model?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
    const usage =
      typeof d.usage?.prompt_tokens === "number" && typeof d.usage.completion_tokens === "number"
        ? { prompt_tokens: d.usage.prompt_tokens, completion_tokens: d.usage.completion_tokens }
        : undefined;
    // A Decision Maker step with its self-check repair round made two calls.
    count += typeof (e.details as { calls?: unknown }).calls === "number" ? Number(e.details.calls) : 1;
    const model = typeof d.model === "string" ? d.model : undefined;
    if (model) models.add(model);
    // A call through the OpenAI Batch API is priced at its discount (docs/llm.md, "Batch mode").
    const batch = (e.details as { via?: unknown }).via === "batch";
    calls.push({ ...(model ? { model } : {}), ...(usage ? { usage } : {}), ...(batch ? { batch } : {}) });
  }
  const cost = callsCost(prices, calls);
  return {
    claims: claims.size,
    calls: count,
    promptTokens: calls.reduce((n, c) => n + (c.usage?.prompt_tokens ?? 0), 0),
    completionTokens: calls.reduce((n, c) => n + (c.usage?.completion_tokens ?? 0), 0),
    usd: cost.usd,
    unpriced: cost.unpriced,
    models: [...models].sort(),
  };
}

/** One line for the batch summary: calls, tokens and model cost per claim. */
export function formatModelCost(s: ModelCostSummary): string {
  const per = (n: number) => (s.claims === 0 ? 0 : n / s.claims);
  const unpriced = s.unpriced > 0 ? ` (+ ${s.unpriced} calls of a model the price table does not name)` : "";
  return (
    `Model: ${s.calls} calls for ${s.claims} claims (${per(s.calls).toFixed(2)} per claim), ` +
    `${Math.round(per(s.promptTokens))} prompt + ${Math.round(per(s.completionTokens))} completion tokens per claim, ` +
    `$${per(s.usd).toFixed(6)} per claim ($${Math.round(per(s.usd) * 1e6)} per million claims) at ${s.models.join(", ") || "no model"} prices${unpriced}.`
  );
}
