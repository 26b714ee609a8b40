// A Decision Maker step delivered more than once (SQS redelivers; two workers race after a visibility timeout)
// may make its self-check repair round in each delivery, and only one answer counts: the claim still replays
// IDENTICAL (found by `npm run chaos`: the second delivery's CLAIMS_SELF_CHECK_FAILED made replay DIFFERENT).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/claims/config.ts";
import { replayClaim } from "../core/claims/replay.ts";
import { createRulesModel } from "../core/claims/rules-model.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createInMemoryAuditLog } from "./in-memory.ts";
import { createInProcessPipeline } from "./in-process.ts";
import type { AgentStepMessage } from "./messages.ts";
import { handleProposal } from "./kernel-service.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import { handleAgentStep } from "./worker.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = parseConfig(
  readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  NOW,
);

/** The rules model, except that every first Decision Maker answer of a step proposes more than was claimed (the self-check repair round fixes it), while `on()`. */
function inflating(on: () => boolean = () => true): LlmPort {
  const rules = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  return {
    provider: "rules",
    model: rules.model,
    async complete(request) {
      const answer = await rules.complete(request);
      const repairRound = request.messages.some((m) => m.role === "assistant");
      if (request.task !== "decide_refund" || repairRound || !answer.ok || !on()) return answer;
      const value = { ...(answer.value as Record<string, unknown>), amount_eur: 9_999 };
      return { ...answer, value: value as never, text: JSON.stringify(value) };
    },
  };
}

describe("a Decision Maker step delivered twice, each with a self-check repair round", () => {
  it.each([["one after the other"], ["late, after the claim was decided"]])("replays IDENTICAL (%s)", async (when) => {
    let now = NOW;
    const p = createInProcessPipeline({
      agent: config.agent,
      orders: config.orders,
      llm: inflating(),
      clock: { now: () => now },
    });
    await p.submit(
      { claim: { order_id: "ord_001", amount_eur: 120, category: "electronics", reason: "Screen is dead" } },
      { claimId: "clm_r" },
    );
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
    expect({
      status: replay.status,
      problems: replay.steps.filter((s) => s.status !== "IDENTICAL").map((s) => s.detail),
    }).toEqual({ status: "IDENTICAL", problems: [] });
  });
});

describe("a Decision Maker step whose delivery died between its repair event and its LLM_CALL", () => {
  it("replays IDENTICAL when the redelivery answers without a repair round", async () => {
    let now = NOW;
    let garble = true;
    const inner = createInMemoryAuditLog();
    let dieOnCall = false;
    const audit = {
      ...inner,
      async append(event: Parameters<typeof inner.append>[0]) {
        if (dieOnCall && event.event_type === "LLM_CALL") {
          dieOnCall = false;
          throw new Error("injected crash between the repair event and the LLM_CALL");
        }
        return inner.append(event);
      },
      // A log that stores a step's events one by one (as every log did before a step's audit became one
      // item): the repair event can be stored without its LLM_CALL, and the replay must cope with that.
      async appendAll(events: Parameters<typeof inner.appendAll>[0]) {
        for (const event of events) await audit.append(event);
      },
    };
    const p = createInProcessPipeline({
      agent: config.agent,
      orders: config.orders,
      llm: inflating(() => garble),
      clock: { now: () => now },
      overrides: { audit },
    });
    await p.submit(
      { claim: { order_id: "ord_001", amount_eur: 120, category: "electronics", reason: "Screen is dead" } },
      { claimId: "clm_r" },
    );
    for (let work = p.queues.take(); work; work = p.queues.take()) {
      now += 1_000;
      if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
      else if (work.queue === "proposals") await handleProposal(work.message, p.deps);
      else if (work.queue === "agent-steps") {
        if (work.message.request.role !== "decision_maker") await handleAgentStep(work.message, p.deps);
        else {
          dieOnCall = true;
          await expect(handleAgentStep(work.message, p.deps)).rejects.toThrow(/injected crash/);
          now += 1_000;
          garble = false; // the model answers the redelivery well at once
          await handleAgentStep(work.message, p.deps);
        }
      }
    }
    expect((await p.claims.getClaim("clm_r"))?.verdict).toBe("ACCEPT");
    const kinds = inner
      .all()
      .filter(
        (e) =>
          e.event_type === "CLAIMS_SELF_CHECK_FAILED" ||
          (e.event_type === "LLM_CALL" && e.details.role === "decision_maker"),
      )
      .map((e) => `${e.event_type}${e.details.calls ? `×${String(e.details.calls)}` : ""}`);
    expect(kinds).toEqual(["CLAIMS_SELF_CHECK_FAILED", "LLM_CALL"]);
    const replay = replayClaim("clm_r", inner.all());
    expect({
      status: replay.status,
      problems: replay.steps.filter((s) => s.status !== "IDENTICAL").map((s) => s.detail),
    }).toEqual({ status: "IDENTICAL", problems: [] });
  });
});
