// A local run's model: LLM_BATCH_MODE=batch is the deployed scheduled batch's, and a local run says so before it starts.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/claim/config.ts";
import { LlmConfigError } from "../core/llm/index.ts";
import { localLlm } from "./serve-llm.ts";

const config = parseConfig(
  readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  Date.parse("2026-06-01T12:00:00Z"),
);
const openai = { LLM_PROVIDER: "openai", LLM_BASE_URL: "http://127.0.0.1:9/v1", LLM_MODEL: "gpt-4o-mini" };

describe("the model of a local run", () => {
  it("refuses LLM_BATCH_MODE=batch as a configuration error naming it, and runs with it off", () => {
    const attempt = () => localLlm(config, { ...openai, LLM_BATCH_MODE: "batch" });
    expect(attempt).toThrow(LlmConfigError);
    expect(attempt).toThrow(/LLM_BATCH_MODE=batch is for the deployed stack's scheduled batch/);
    expect(localLlm(config, { ...openai, LLM_BATCH_MODE: "off" }).port.model).toBe("gpt-4o-mini");
  });
});
