// A local run's model: LLM_BATCH_MODE=batch gives `claims batch` the model behind the OpenAI Batch API (docs/llm.md,
// "Batch mode"); `claims serve` answers live claims and refuses it before it starts, naming what works.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/claim/config.ts";
import { LlmConfigError } from "../core/llm/index.ts";
import { batchPollMsFromEnv, localLlm } from "./serve-llm.ts";

const config = parseConfig(
  readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  Date.parse("2026-06-01T12:00:00Z"),
);
const openai = { LLM_PROVIDER: "openai", LLM_BASE_URL: "http://127.0.0.1:9/v1", LLM_MODEL: "gpt-4o-mini" };

describe("the model of a local run", () => {
  it("refuses LLM_BATCH_MODE=batch for claims serve as a configuration error naming it and what works", () => {
    const attempt = () => localLlm(config, { ...openai, LLM_BATCH_MODE: "batch" });
    expect(attempt).toThrow(LlmConfigError);
    expect(attempt).toThrow(/LLM_BATCH_MODE=batch is for batch runs: `claims batch` and the deployed scheduled batch/);
    expect(localLlm(config, { ...openai, LLM_BATCH_MODE: "off" }).batch).toBeUndefined();
  });

  it("gives claims batch the Batch API with its hold and poll settings", () => {
    const env = { ...openai, LLM_BATCH_MODE: "batch", LLM_BATCH_HOLD_S: "120", LLM_BATCH_POLL_S: "0.5" };
    const llm = localLlm(config, env, Number.POSITIVE_INFINITY, "batch");
    expect(llm.batch).toMatchObject({ holdMs: 120_000, pollMs: 500 });
    expect(llm.batch!.port.model).toBe("gpt-4o-mini");
    expect(llm.description).toContain("batch=Batch API");
    expect(localLlm(config, openai, Number.POSITIVE_INFINITY, "batch").batch).toBeUndefined();
  });

  it("reads LLM_BATCH_POLL_S as seconds, 30 by default, and names it when it is wrong", () => {
    expect(batchPollMsFromEnv({})).toBe(30_000);
    expect(batchPollMsFromEnv({ LLM_BATCH_POLL_S: "0.02" })).toBe(20);
    expect(batchPollMsFromEnv({ LLM_BATCH_POLL_S: "3600" })).toBe(3_600_000);
    for (const bad of ["0", "-1", "abc", "1e3", "3601"])
      expect(() => batchPollMsFromEnv({ LLM_BATCH_POLL_S: bad }), bad).toThrow(/LLM_BATCH_POLL_S must be seconds/);
  });

  it("refuses the Batch API for the rules model, naming LLM_BATCH_MODE", () => {
    expect(() => localLlm(config, { LLM_BATCH_MODE: "batch" }, Number.POSITIVE_INFINITY, "batch")).toThrow(
      /LLM_BATCH_MODE=batch needs LLM_PROVIDER=openai/,
    );
  });
});
