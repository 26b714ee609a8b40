// Token accounting helpers shared by the LLM implementations.
import type { LlmMessage, LlmUsage } from "./port.ts";

/** A rough token count (one token per four characters), for implementations that get no figures from an endpoint. */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Estimated usage of a call from its prompt and its answer. */
export function estimateUsage(system: string, messages: readonly LlmMessage[], answer: string): LlmUsage {
  const prompt = estimateTokens(system) + messages.reduce((n, m) => n + estimateTokens(m.content), 0);
  const completion = estimateTokens(answer);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, estimated: true };
}

/** Adds up the usage of several calls; the sum is estimated if any part was. */
export function sumUsage(usages: readonly LlmUsage[]): LlmUsage {
  return usages.reduce<LlmUsage>(
    (acc, u) => ({
      prompt_tokens: acc.prompt_tokens + u.prompt_tokens,
      completion_tokens: acc.completion_tokens + u.completion_tokens,
      total_tokens: acc.total_tokens + u.total_tokens,
      estimated: acc.estimated || u.estimated,
    }),
    { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, estimated: false },
  );
}
