// Replay of the self-check's repair rounds inside the Decision Maker's steps, and the responsibility contract the
// self-check runs with (the caller's, else the one the claim's audit records).
import type { ResponsibilityContract } from "../../integrity/index.ts";
import type { AgentStepRequestedEvent } from "../../crew/index.ts";
import type { Claim } from "../../claim/claim.ts";
import { CLAIMS_ROLES } from "../../agents/crew.ts";
import { selfCheck, selfCheckRepairReason } from "../../agents/self-check.ts";
import { SimulationStartDetailsSchema } from "../audit-events.ts";
import type { SimulationStartDetails } from "../audit-events.ts";
import { readDetails } from "./memo.ts";
import type { ReplayDetails } from "./events.ts";
import { label, unused } from "./context.ts";
import type { Ctx, Flow, Recorded, Scope } from "./context.ts";

/**
 * A Decision Maker whose first proposal failed the self-check got one repair round in its own step
 * (docs/kernel.md): its LLM_CALL says `calls: 2`, and a CLAIMS_SELF_CHECK_FAILED recorded while the claim
 * was RUNNING holds the first proposal, which must fail the self-check again with the recorded failures.
 * A step delivered more than once (a redelivery, two workers racing) may have made a repair round in more
 * than one delivery, and a delivery that died between its two records left its repair event without its
 * LLM_CALL: every repair event recorded is checked, and a repair round an LLM_CALL records must have one.
 */
export function checkSelfCheckRepair(
  ctx: Ctx,
  s: Scope,
  what: string,
  correlationId: string,
  request: AgentStepRequestedEvent | undefined,
  claim: Claim,
  flow: Flow,
): void {
  const repairs = ctx.mine.filter(
    (x) =>
      x.event.event_type === "CLAIMS_SELF_CHECK_FAILED" &&
      x.event.state === "RUNNING" &&
      x.event.details.correlation_id === correlationId,
  );
  const calls = ctx.mine.filter(
    (x) =>
      x.event.event_type === "LLM_CALL" &&
      (x.parsed as ReplayDetails<"LLM_CALL"> | undefined)?.correlation_id === correlationId,
  );
  const repaired = calls.some((x) => (x.parsed as ReplayDetails<"LLM_CALL">).calls === 2);
  if (repaired && repairs.length === 0)
    s.incomplete(`CLAIMS_SELF_CHECK_FAILED is missing: ${what}'s LLM_CALL records a self-check repair round`);
  else {
    // A delivery records its repair round and its LLM_CALL at one instant, the repair first: an LLM_CALL saying
    // `calls: 2` has its repair event beside it.
    for (const c of calls) {
      if (
        (c.parsed as ReplayDetails<"LLM_CALL">).calls === 2 &&
        !repairs.some((x) => x.event.created_at === c.event.created_at)
      )
        s.incomplete(
          `${label(c)} records a self-check repair round, but no CLAIMS_SELF_CHECK_FAILED was recorded with it`,
        );
    }
  }
  for (const x of repairs) checkRepairEvent(ctx, s, what, x, request, claim, flow);
}

/**
 * One recorded self-check repair round: the Decision Maker's, its first proposal failing the self-check as recorded,
 * and the LLM_CALL recorded with it (same instant), if its delivery got that far, says `calls: 2`.
 */
export function checkRepairEvent(
  ctx: Ctx,
  s: Scope,
  what: string,
  x: Recorded,
  request: AgentStepRequestedEvent | undefined,
  claim: Claim,
  flow: Flow,
): void {
  ctx.used.add(x.n);
  if (x.error !== undefined) {
    ctx.reported.add(x.n);
    s.incomplete(`${label(x)} cannot be read: ${x.error}`);
    return;
  }
  const beside = ctx.mine.filter(
    (c) =>
      c.event.event_type === "LLM_CALL" &&
      c.event.created_at === x.event.created_at &&
      (c.parsed as ReplayDetails<"LLM_CALL"> | undefined)?.correlation_id === x.event.details.correlation_id,
  );
  s.expect(
    beside.length === 0 || beside.some((c) => (c.parsed as ReplayDetails<"LLM_CALL">).calls === 2),
    `${label(x)} records a self-check repair round, but the LLM_CALL recorded with it (${beside.map(label).join(", ")}) says the step made one call`,
  );
  const d = x.parsed as ReplayDetails<"CLAIMS_SELF_CHECK_FAILED">;
  s.expect(
    request !== undefined &&
      x.event.details.role === request.role &&
      (request.role === CLAIMS_ROLES.decision || request.role === CLAIMS_ROLES.officer),
    `${label(x)}: a self-check repair round belongs to the Decision Maker's (or the Claims Officer's) step, not to ${String(x.event.details.role)}`,
  );
  s.expect(d.reason_code === "CLAIMS_SELF_CHECK_FAILED", `${label(x)} reason_code is ${d.reason_code}`);
  // Without a responsibility contract the self-check step reports it; nothing more to recompute here.
  const responsibility = ctx.opts.responsibility ?? recordedResponsibility(ctx, flow);
  if (!responsibility) return;
  const check = selfCheck(d.output, responsibility, claim);
  if (!s.expect(!check.ok, `${what}: ${label(x)} records a self-check failure, but its proposal passes`) || check.ok)
    return;
  s.compare(`${label(x)} failures (the step's first proposal)`, d.failures, check.failures);
  s.compare(`${label(x)} reason`, d.reason, selfCheckRepairReason(check.failures));
}

export function recordedResponsibility(ctx: Ctx, flow: Flow): ResponsibilityContract | undefined {
  const submitted = unused(ctx, "PROPOSAL_SUBMITTED")[0]?.parsed as ReplayDetails<"PROPOSAL_SUBMITTED"> | undefined;
  if (submitted) return submitted.kernel_inputs.responsibility;
  if (flow.simulationId === undefined) return undefined;
  for (const e of ctx.all) {
    if (e.event_type !== "SIMULATION_START" || e.details.simulation_id !== flow.simulationId) continue;
    const start = readDetails(e.event_type, e.details, SimulationStartDetailsSchema, ctx.opts.memo);
    if (start.ok) return (start.data as SimulationStartDetails).agent.responsibility;
  }
  return undefined;
}
