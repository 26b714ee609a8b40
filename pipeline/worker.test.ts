// A Decision Maker step delivered more than once (SQS redelivers; two workers race after a visibility timeout)
// may make its self-check repair round in each delivery, and only one answer counts: the claim still replays
// IDENTICAL (found by `npm run chaos`: the second delivery's CLAIMS_SELF_CHECK_FAILED made replay DIFFERENT).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/claims/config.ts";
import { replayClaim } from "../core/claims/replay.ts";
import { createRulesModel } from "../core/llm/index.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createInProcessPipeline } from "./in-process.ts";
import type { AgentStepMessage } from "./messages.ts";
import { handleProposal } from "./kernel-service.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import { handleAgentStep } from "./worker.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = parseConfig(readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"), "config.yaml", NOW);

/** The rules model, except that every first Decision Maker answer of a step proposes more than was claimed (the self-check repair round fixes it). */
function inflating(): LlmPort {
  const rules = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  return {
    provider: "rules",
    model: rules.model,
    async complete(request) {
      const answer = await rules.complete(request);
      const repairRound = request.messages.some((m) => m.role === "assistant");
      if (request.task !== "decide_refund" || repairRound || !answer.ok) return answer;
      const value = { ...(answer.value as Record<string, unknown>), amount_eur: 9_999 };
      return { ...answer, value: value as never, text: JSON.stringify(value) };
    },
  };
}

describe("a Decision Maker step delivered twice, each with a self-check repair round", () => {
  it.each([["one after the other"], ["late, after the claim was decided"]])("replays IDENTICAL (%s)", async (when) => {
    let now = NOW;
    const p = createInProcessPipeline({ agent: config.agent, orders: config.orders, llm: inflating(), clock: { now: () => now } });
    await p.submit({ claim: { order_id: "ord_001", amount_eur: 120, category: "electronics", reason: "Screen is dead" } }, { claimId: "clm_r" });
    let decisionStep: AgentStepMessage | undefined;
    for (let work = p.queues.take(); work; work = p.queues.take()) {
      now += 1_000;
      if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
      else if (work.queue === "proposals") await handleProposal(work.message, p.deps);
      else if (work.queue === "agent-steps") {
        await handleAgentStep(work.message, p.deps);
        if (work.message.request.role === "decision_maker") {
          decisionStep = work.message;
          now += 1_000;
          if (when === "one after the other") await handleAgentStep(work.message, p.deps);
        }
      }
    }
    if (when !== "one after the other") {
      now += 60_000;
      await handleAgentStep(decisionStep!, p.deps);
      await p.drain();
    }
    expect((await p.claims.getClaim("clm_r"))?.verdict).toBe("ACCEPT");
    expect(p.auditEvents().filter((e) => e.event_type === "CLAIMS_SELF_CHECK_FAILED")).toHaveLength(2);
    const replay = replayClaim("clm_r", p.auditEvents());
    expect({ status: replay.status, problems: replay.steps.filter((s) => s.status !== "IDENTICAL").map((s) => s.detail) }).toEqual({ status: "IDENTICAL", problems: [] });
  });
});
