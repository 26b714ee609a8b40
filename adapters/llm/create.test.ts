import { describe, expect, it } from "vitest";
import { analystMessages } from "../../core/agents/prompts.ts";
import type { ClaimsContract } from "../../core/integrity/contracts.ts";
import { llmConfigFromEnv } from "./config.ts";
import { createLlm } from "./create.ts";
import { chatCompletion, startScriptedLlmServer } from "./scripted-server.ts";

const contract: ClaimsContract = {
  allowed_refund_categories: ["electronics"],
  max_refund_without_escalation: 500,
  return_window_days: 14,
};
const request = analystMessages(
  { order_id: "ord_1", amount_eur: 10, category: "electronics", reason: "broken" },
  contract,
);

describe("createLlm", () => {
  it("builds the rules model for provider=rules", async () => {
    const llm = createLlm(llmConfigFromEnv({}), { contract });
    expect(llm.provider).toBe("rules");
    expect(await llm.complete(request)).toMatchObject({ ok: true, model: "rules-v1" });
  });

  it("builds the OpenAI-compatible model for provider=openai and talks to the configured endpoint", async () => {
    const server = await startScriptedLlmServer([chatCompletion("looks fine")]);
    try {
      const llm = createLlm(
        llmConfigFromEnv({ LLM_PROVIDER: "openai", LLM_BASE_URL: server.baseURL, LLM_MODEL: "scripted-model" }),
        { contract },
      );
      expect(await llm.complete(request)).toMatchObject({ ok: true, value: "looks fine", model: "scripted-model" });
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("reports an unreachable configured endpoint instead of falling back to rules", async () => {
    const llm = createLlm(
      llmConfigFromEnv({ LLM_PROVIDER: "openai", LLM_BASE_URL: "http://127.0.0.1:1/v1", LLM_MAX_RETRIES: "0" }),
      { contract },
    );
    expect(await llm.complete(request)).toMatchObject({ ok: false, code: "LLM_UNREACHABLE" });
  });
});
