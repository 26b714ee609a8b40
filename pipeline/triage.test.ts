// Triage through the in-process pipeline: a claim the kernel's rules reject is decided without a model call, with a
// normal ClaimVerdict published once; a crash anywhere in it is finished by the redelivery, never decided twice.
import { describe, expect, it } from "vitest";
import { policyVersionOf, triageIdempotencyKey } from "../core/kernel/execution.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import type { PipelineDeps } from "./deps.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

/** The rules model, counting its calls. */
function countingModel(): LlmPort & { calls: number } {
  const model = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  const counting = {
    ...model,
    calls: 0,
    complete: (async (req: Parameters<LlmPort["complete"]>[0]) => {
      counting.calls++;
      return model.complete(req);
    }) as LlmPort["complete"],
  };
  return counting;
}

function pipeline(llm: LlmPort, overrides: Partial<PipelineDeps> = {}) {
  return createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm,
    clock: { now: () => NOW },
    overrides,
  });
}

const UNKNOWN_ORDER = { claim: { order_id: "ord_999", amount_eur: 40, category: "home", reason: "Lamp flickers" } };

describe("triage", () => {
  it("rejects a claim on an unknown order without a model call: one ClaimVerdict, no policy kind, the triage key", async () => {
    const llm = countingModel();
    const p = pipeline(llm);
    const { record } = await p.decide(UNKNOWN_ORDER, { claimId: "clm_t" });
    expect(llm.calls).toBe(0);
    expect(record).toMatchObject({ status: "DECIDED", verdict: "REJECT", reason_code: "ORDER_NOT_FOUND" });
    const verdicts = p.publisher.published.filter((e) => e.detailType === "ClaimVerdict");
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]!.detail).toMatchObject({
      claim_id: "clm_t",
      verdict_id: record!.verdict_id,
      order_id: "ord_999",
      amount_eur: 40,
      policy_kind: null,
      idempotency_key: triageIdempotencyKey(record!.dfid, UNKNOWN_ORDER.claim),
      // The policy that decided it, as on every verdict.
      policy_version: policyVersionOf(config.agent),
    });
    expect(p.auditEvents().map((e) => e.event_type)).toEqual(["CLAIM_RECEIVED", "CLAIM_TRIAGED", "KERNEL_VERDICT"]);
    expect(replayClaim("clm_t", p.auditEvents()).status).toBe("IDENTICAL");
  });

  it("sends a claim that can pass to the crew as before", async () => {
    const llm = countingModel();
    const p = pipeline(llm);
    const { record } = await p.decide(
      { claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead screen" } },
      { claimId: "clm_ok" },
    );
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT" });
    expect(llm.calls).toBe(1); // the compact crew's one step (docs/llm.md, "Crew shape")
    expect(p.auditEvents().some((e) => e.event_type === "CLAIM_TRIAGED")).toBe(false);
  });

  it("finishes a triage whose delivery died after storing the verdict: the stored one is published once", async () => {
    const llm = countingModel();
    let failures = 1;
    const real = pipeline(llm);
    const flaky = {
      ...real.publisher,
      publish: async (entries: Parameters<typeof real.publisher.publish>[0]) => {
        if (failures-- > 0) throw new Error("the bus is down");
        return real.publisher.publish(entries);
      },
    };
    const p = pipeline(llm, { publisher: flaky });
    expect((await p.submit(UNKNOWN_ORDER, { claimId: "clm_c" })).ok).toBe(true);
    const start = p.queues.take();
    if (start?.queue !== "crew-events") throw new Error("expected the crew start");
    await expect(handleCrewMessage(start.message, p.deps)).rejects.toThrow("the bus is down");
    expect((await p.claims.getClaim("clm_c"))?.status).toBe("RUNNING"); // as intake stored it: not final
    // The orders change before the redelivery: the stored verdict is finished, not decided again.
    const known = { ...p.deps, orders: { ...p.deps.orders, getOrder: async () => config.orders[0] } };
    expect(await handleCrewMessage(start.message, known)).toBe("TRIAGED");
    expect(await handleCrewMessage(start.message, known)).toBe("TRIAGED");
    expect(llm.calls).toBe(0);
    expect(real.publisher.published.filter((e) => e.detailType === "ClaimVerdict")).toHaveLength(1);
    expect(await p.claims.getClaim("clm_c")).toMatchObject({ status: "DECIDED", reason_code: "ORDER_NOT_FOUND" });
    expect(replayClaim("clm_c", p.auditEvents()).status).toBe("IDENTICAL");
  });
});
