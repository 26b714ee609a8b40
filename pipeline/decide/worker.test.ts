// The worker's process for one agent step, without ports: from the step as run (its result and timing) to the step
// held or answered, the claim read only when the decider asks. The trace is what it asked (`? kind`), each list of
// effects it returned, and what it leaves behind should its answer fail to go out.
import { describe, expect, it } from "vitest";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { AgentStepMessage } from "../messages.ts";
import { ACCEPTABLE, claimRecord, NOW, policy, shape } from "./decide.test-kit.ts";
import { decideWorker, workerStart } from "./worker.ts";
import type { AgentStepRun, WorkerOutcome } from "./worker.ts";

const request = {
  type: "agent.step.requested",
  crewId: "clm_1",
  correlationId: "c1",
  phaseIndex: 0,
  role: "analyst",
  agentId: "claims-analyst",
  attempt: 1,
  roleSnapshot: {},
  input: {},
} as unknown as AgentStepMessage["request"];
const named: AgentStepMessage = { claim_id: "clm_1", dfid: "dfid_clm_1", root_dfid: "dfid_sim_run", request };
const unnamed: AgentStepMessage = { claim_id: "clm_1", dfid: "dfid_clm_1", request };

const completed = (extra: Partial<AgentStepRun["result"]> = {}): AgentStepRun => ({
  result: {
    event: { type: "agent.step.completed", crewId: "clm_1", correlationId: "c1", output: { summary: "ok" } },
    model: "rules-v1",
    attempts: 1,
    ...extra,
  },
  started: NOW - 250,
  now: NOW,
});
const unreachable: AgentStepRun = {
  result: {
    event: {
      type: "agent.step.failed",
      crewId: "clm_1",
      correlationId: "c1",
      error: { code: "LLM_UNREACHABLE", message: "connect ECONNREFUSED" },
    },
    model: "m",
    attempts: 3,
  },
  started: NOW - 250,
  now: NOW,
};
const HOLD = { ...policy, settings: { ...policy.settings, llmOutageHoldMs: 3_600_000 } };

function walk(
  message: AgentStepMessage,
  run: AgentStepRun,
  claim: ClaimRecord | undefined,
  p: typeof policy = policy,
): { trace: string[]; ifFailed: string[]; outcome: WorkerOutcome; answer?: unknown } {
  const trace: string[] = [];
  let ifFailed: string[] = [];
  let answer: unknown;
  let step = decideWorker(workerStart(message), { kind: "ran", ...run }, p);
  for (;;) {
    if (step.effects.length > 0) trace.push(shape(step.effects).join(" + "));
    if (step.ifFailed) ifFailed = shape(step.ifFailed);
    for (const e of step.effects) if (e.kind === "crew_event") answer = e.message;
    const { next } = step;
    if ("done" in next) return { trace, ifFailed, outcome: next.done, answer };
    if ("then" in next) {
      step = next.then;
      continue;
    }
    trace.push(`? ${next.awaiting.kind}`);
    step = decideWorker(next.state, { kind: "claim", claim }, p);
  }
}

describe("decideWorker", () => {
  it("answers the crew with the step's LLM_CALL carried, reading no claim when the message names the flow", () => {
    const walked = walk(named, completed(), undefined);
    expect(walked).toMatchObject({
      trace: ["crew_event agent.step.completed"],
      // An answer that cannot be sent leaves its model call audited (the step is retried).
      ifFailed: ["audit LLM_CALL"],
      outcome: "COMPLETED",
    });
    expect(walked.answer).toMatchObject({
      audit: [{ event_type: "LLM_CALL", root_dfid: "dfid_sim_run", details: { duration_ms: 250, ok: true } }],
    });
  });

  it("reads the claim for a message sent before it named the flow, and audits under the claim's flow", () => {
    const claim = claimRecord(ACCEPTABLE, { root_dfid: "dfid_sim_x", simulation_id: "x" });
    const walked = walk(unnamed, completed(), claim);
    expect(walked.trace).toEqual(["? claim", "crew_event agent.step.completed"]);
    expect(walked.answer).toMatchObject({ audit: [{ root_dfid: "dfid_sim_x", details: { simulation_id: "x" } }] });
  });

  it("audits a self-check repair round before the call", () => {
    const repair = { output: { action: "REFUND" }, failures: [{ code: "AMOUNT", message: "too much" }] };
    const walked = walk(named, completed({ selfCheckRepair: repair, calls: 2 } as never), undefined);
    expect(walked.ifFailed).toEqual(["audit CLAIMS_SELF_CHECK_FAILED", "audit LLM_CALL"]);
  });

  it("appends an audit too large to carry first, on its own, then answers", () => {
    const big = completed({ selfCheckRepair: { output: { note: "x".repeat(70_000) }, failures: [] } } as never);
    const walked = walk(named, big, undefined);
    expect(walked.trace).toEqual([
      "audit CLAIMS_SELF_CHECK_FAILED + audit LLM_CALL",
      "crew_event agent.step.completed",
    ]);
    expect(walked.answer).not.toHaveProperty("audit");
  });

  it("answers a failed step FAILED when no hold applies (none configured)", () => {
    const walked = walk(named, unreachable, claimRecord(ACCEPTABLE));
    expect(walked).toMatchObject({ trace: ["? claim", "crew_event agent.step.failed"], outcome: "FAILED" });
    expect(walked.answer).toMatchObject({ audit: [{ severity: "WARN", details: { ok: false } }] });
  });

  it.each<[string, Partial<ClaimRecord>, string[]]>([
    [
      "starts a hold: the step sent again later, CLAIM_HELD, the hold recorded",
      {},
      ["agent_step + audit CLAIM_HELD + claim_update"],
    ],
    [
      "drops a surplus copy of a held step (another is due at the claim's next_at)",
      { llm_hold: { since: new Date(NOW).toISOString(), key: "c1", next_at: new Date(NOW + 30_000).toISOString() } },
      [],
    ],
  ])("holds an unreachable model's step instead of answering: %s", (_name, claim, effects) => {
    const walked = walk(named, unreachable, claimRecord(ACCEPTABLE, claim), HOLD);
    expect(walked).toMatchObject({ trace: ["? claim", ...effects], outcome: "HELD" });
  });
});
