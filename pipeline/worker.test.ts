// A Decision Maker step delivered more than once (SQS redelivers; two workers race after a visibility timeout)
// may make its self-check repair round in each delivery, and only one answer counts: the claim still replays
// IDENTICAL (found by `npm run chaos`: the second delivery's CLAIMS_SELF_CHECK_FAILED made replay DIFFERENT).
import { describe, expect, it } from "vitest";
import { replayClaim } from "../core/history/replay/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createInMemoryAuditLog } from "./in-memory.ts";
import { createInProcessPipeline } from "./in-process.ts";
import type { AgentStepMessage } from "./messages.ts";
import { handleProposal } from "./kernel-service.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import { handleAgentStep } from "./worker.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
// The seed's two-agent crew (`crew_shape: two_agents`): these tests follow its Decision Maker's steps.
const config = bundledConfig(NOW, { crewShape: "two_agents" });

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
    // The second answer is a duplicate to the crew; the model call it made is audited all the same.
    const calls = p.auditEvents().filter((e) => e.event_type === "LLM_CALL" && e.details.role === "decision_maker");
    expect(calls).toHaveLength(2);
    const replay = replayClaim("clm_r", p.auditEvents());
    expect({
      status: replay.status,
      problems: replay.steps.filter((s) => s.status !== "IDENTICAL").map((s) => s.detail),
    }).toEqual({ status: "IDENTICAL", problems: [] });
  });
});

describe("a Decision Maker step whose delivery died between its repair event and its LLM_CALL", () => {
  // The step's audit travels with its answer; only an answer that could not be sent has it appended by the worker
  // (and that append can die half way through a log that stores events one by one).
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
          const send = p.deps.queues.sendCrewEvents;
          p.deps.queues.sendCrewEvents = async () => {
            throw new Error("injected crash: the answer was not sent");
          };
          await expect(handleAgentStep(work.message, p.deps)).rejects.toThrow(/the answer was not sent/);
          p.deps.queues.sendCrewEvents = send;
          expect(dieOnCall).toBe(false); // the fallback append reached the LLM_CALL and died there
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
    // The redelivery's LLM_CALL came with its answer, and was stored with the step the answer made.
    expect(
      inner.all().filter((e) => e.event_type === "AGENT_STEP" && !("audit" in (e.details.inbound as object))),
    ).toHaveLength(2);
    const replay = replayClaim("clm_r", inner.all());
    expect({
      status: replay.status,
      problems: replay.steps.filter((s) => s.status !== "IDENTICAL").map((s) => s.detail),
    }).toEqual({ status: "IDENTICAL", problems: [] });
  });
});

describe("the audit of a step's model call", () => {
  it("is stored with the step its answer makes (one write), never appended alone", async () => {
    const inner = createInMemoryAuditLog();
    const writes: string[][] = [];
    const audit = {
      ...inner,
      async append(event: Parameters<typeof inner.append>[0]) {
        writes.push([event.event_type]);
        return inner.append(event);
      },
      async appendAll(events: Parameters<typeof inner.appendAll>[0]) {
        writes.push(events.map((e) => e.event_type));
        return inner.appendAll(events);
      },
    };
    const p = createInProcessPipeline({
      agent: config.agent,
      orders: config.orders,
      llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      clock: { now: () => NOW },
      overrides: { audit },
    });
    await p.submit(
      { claim: { order_id: "ord_001", amount_eur: 120, category: "electronics", reason: "Screen is dead" } },
      { claimId: "clm_w" },
    );
    await p.drain();
    expect((await p.claims.getClaim("clm_w"))?.verdict).toBe("ACCEPT");
    const withCall = writes.filter((w) => w.includes("LLM_CALL"));
    expect(withCall).toEqual([
      ["LLM_CALL", "AGENT_STEP"],
      ["LLM_CALL", "AGENT_STEP", "AGENT_DECISION"],
    ]);
    expect(inner.all().filter((e) => e.event_type === "LLM_CALL")).toHaveLength(2);
    const replay = replayClaim("clm_w", inner.all());
    expect(replay.status).toBe("IDENTICAL");
  });

  it("is appended when its answer reaches no crew (the claim is gone)", async () => {
    const p = createInProcessPipeline({
      agent: config.agent,
      orders: config.orders,
      llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      clock: { now: () => NOW },
    });
    const event = {
      dfid: "dfid_clm_gone",
      root_dfid: "dfid_clm_gone",
      event_type: "LLM_CALL" as const,
      severity: "INFO" as const,
      state: "RUNNING",
      details: { role: "analyst" },
      created_at: new Date(NOW).toISOString(),
    };
    const outcome = await handleCrewMessage(
      { type: "agent.step.completed", crewId: "clm_gone", correlationId: "c1", output: {}, audit: [event] },
      p.deps,
    );
    expect(outcome).toBe("IGNORED");
    expect(p.auditEvents()).toEqual([event]);
  });
});

describe("the worker's read of the claim", () => {
  it("is spared when the step names the claim's flow, and made for a step sent before it did", async () => {
    const p = createInProcessPipeline({
      agent: config.agent,
      orders: config.orders,
      llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      clock: { now: () => NOW },
    });
    await p.submit(
      {
        claim: { order_id: "ord_001", amount_eur: 120, category: "electronics", reason: "Screen is dead" },
        simulation_id: "sim_f",
      },
      { claimId: "clm_f" },
    );
    const reads: string[] = [];
    const getClaim = p.deps.claims.getClaim;
    p.deps.claims.getClaim = async (id) => {
      reads.push(id);
      return getClaim(id);
    };
    const steps: AgentStepMessage[] = [];
    for (let work = p.queues.take(); work; work = p.queues.take()) {
      if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
      else if (work.queue === "proposals") await handleProposal(work.message, p.deps);
      else if (work.queue === "agent-steps") {
        steps.push(work.message);
        const before = reads.length;
        await handleAgentStep(work.message, p.deps);
        expect(reads.length).toBe(before);
      }
    }
    expect(steps.map((s) => [s.root_dfid, s.simulation_id])).toEqual([
      ["dfid_sim_sim_f", "sim_f"],
      ["dfid_sim_sim_f", "sim_f"],
    ]);
    const calls = p.auditEvents().filter((e) => e.event_type === "LLM_CALL");
    expect(calls.map((e) => [e.root_dfid, e.details.simulation_id])).toEqual([
      ["dfid_sim_sim_f", "sim_f"],
      ["dfid_sim_sim_f", "sim_f"],
    ]);
    // A step sent before the message named the flow: the worker reads the claim for it.
    const { root_dfid: _r, simulation_id: _s, ...older } = steps[0]!;
    const before = reads.length;
    await handleAgentStep(older, p.deps);
    expect(reads.slice(before)).toEqual(["clm_f"]);
  });
});
