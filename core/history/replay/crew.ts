// Replay of the crew: started from the claim as intake stored it, each recorded inbound event delivered at its
// recorded instant, what each caused compared with the record, each answered step's LLM call and self-check
// repair round checked, the fixer's stand-ins; and a crew that failed (or gave no refund proposal) ending in review.
import { initialCrewSnapshot, stepCrewMany } from "../../crew/index.ts";
import type {
  AgentStepCompletedEvent,
  AgentStepFailedEvent,
  AgentStepRequestedEvent,
  CrewCompletedEvent,
  CrewFailedEvent,
  CrewSnapshot,
  FixerInvokedEvent,
  InboundCrewEvent,
  OutboundCrewEvent,
} from "../../crew/index.ts";
import type { Claim } from "../../claim/claim.ts";
import {
  AnalystOutputSchema,
  CLAIMS_CREW_COMPACT_NAME,
  CLAIMS_CREW_NAME,
  claimsCrewGraph,
  claimsCrewInput,
  isClaimsCrewName,
} from "../../agents/crew.ts";
import type { ReplayDetails } from "./events.ts";
import { AFTER_CREW, branch, enter, label, message, same, scope, unused } from "./context.ts";
import type { Ctx, Flow, Scope } from "./context.ts";
import { review } from "./review.ts";
import { checkRepairEvent, checkSelfCheckRepair } from "./self-check.ts";
import { plainFacts } from "./memo.ts";

/** The crew from its recorded inbound events, each at its recorded instant; returns how it ended. */
export function replayCrew(ctx: Ctx, claim: Claim, flow: Flow): CrewCompletedEvent | CrewFailedEvent | undefined {
  const f = enter(ctx, "crew", "crew");
  if (!f) return undefined;
  const s = scope(ctx, "crew");
  const { d, r, raw } = f.CREW_STARTED;
  const rootInput = claimsCrewInput(claim, flow.receivedAt);
  // The crew recorded is the crew replayed: the two agents, or the compact crew (docs/llm.md, "Crew shape").
  s.expect(
    d.crew_id === ctx.claimId && isClaimsCrewName(d.crew),
    `${label(r)} starts crew ${d.crew_id} (${d.crew}), not ${ctx.claimId} (${CLAIMS_CREW_NAME} or ${CLAIMS_CREW_COMPACT_NAME})`,
  );
  s.expect(
    d.crew !== CLAIMS_CREW_COMPACT_NAME || plainFacts(claim, ctx.opts.memo),
    `${label(r)} starts the compact crew on a claim whose facts are not plain: only the two agents decide it`,
  );
  s.compare(`${label(r)} root input (the claim as intake stored it)`, raw.root_input, rootInput);
  s.expect(
    d.now_ms === Date.parse(r.event.created_at),
    `${label(r)} now_ms ${d.now_ms} is not its own time ${r.event.created_at}`,
  );

  const graph = claimsCrewGraph(d.timeouts, isClaimsCrewName(d.crew) ? d.crew : CLAIMS_CREW_NAME);
  const requested = new Map<string, AgentStepRequestedEvent>();
  const fixers: FixerInvokedEvent[] = [];
  let end: CrewCompletedEvent | CrewFailedEvent | undefined;
  const note = (events: readonly OutboundCrewEvent[]) => {
    for (const e of events) {
      if (e.type === "agent.step.requested") requested.set(e.correlationId, e);
      else if (e.type === "fixer.invoked") fixers.push(e);
      else if (e.type === "crew.completed" || e.type === "crew.failed") end = e;
    }
  };
  // The crew steps as the orchestrator steps it: snapshot in, events at the recorded instant, snapshot out.
  let snapshot: CrewSnapshot;
  try {
    const start = {
      type: "crew.start",
      crewId: ctx.claimId,
      input: rootInput,
      task: { description: `Decide refund claim ${ctx.claimId}` },
    };
    const started = stepCrewMany(initialCrewSnapshot({ crewId: ctx.claimId, graph }), [start], {
      graph,
      nowMs: d.now_ms,
    });
    snapshot = started.snapshot;
    note(started.results[0]!.events);
  } catch (e) {
    s.incomplete(`the crew cannot start from ${label(r)}: ${message(e)}`);
    return undefined;
  }

  const stepRecords = ctx.mine.filter(
    (x) =>
      x.event.event_type === "AGENT_STEP" ||
      (x.event.event_type === "AGENT_STEP_FAILED" && !("fixer" in x.event.details)),
  );
  for (const x of stepRecords) {
    ctx.used.add(x.n);
    if (x.error !== undefined) {
      ctx.reported.add(x.n);
      s.incomplete(`${label(x)} cannot be read, so the crew cannot be replayed past it: ${x.error}`);
      return undefined;
    }
    const step = x.parsed as { inbound: InboundCrewEvent; now_ms: number; caused: string[] };
    const inbound = step.inbound;
    const what = `${label(x)} (${inbound.type}${"correlationId" in inbound ? ` ${inbound.correlationId}` : ""})`;
    s.expect(
      (inbound.type === "agent.step.completed") === (x.event.event_type === "AGENT_STEP"),
      `${what} is recorded as ${x.event.event_type}`,
    );
    s.expect(
      step.now_ms === Date.parse(x.event.created_at),
      `${what} now_ms ${step.now_ms} is not its own time ${x.event.created_at}`,
    );
    let out: OutboundCrewEvent[];
    try {
      const stepped = stepCrewMany(snapshot, [inbound], { graph, nowMs: step.now_ms });
      snapshot = stepped.snapshot;
      out = stepped.results[0]!.events;
    } catch (e) {
      s.incomplete(`${what} cannot be delivered to the crew: ${message(e)}`);
      return undefined;
    }
    s.compare(
      `what ${what} caused`,
      step.caused,
      out.map((e) => e.type),
    );
    if (inbound.type === "agent.step.failed" && out.some((e) => e.type === "crew.failed"))
      ctx.crewFailureCause = inbound.error;
    if (inbound.type === "agent.step.completed" || inbound.type === "agent.step.failed") {
      const request = requested.get(inbound.correlationId);
      checkLlmCall(ctx, s, what, inbound, request);
      checkSelfCheckRepair(ctx, s, what, inbound.correlationId, request, claim, flow);
      if (inbound.type === "agent.step.completed" && request?.phaseIndex === 0 && graph.name === CLAIMS_CREW_NAME) {
        // The worker copies the claim the analyst assessed into its answer; the decision maker reads it from there.
        const analyst = AnalystOutputSchema.safeParse(inbound.output);
        s.expect(
          analyst.success && same({ claim: analyst.data.claim, received_at: analyst.data.received_at }, rootInput),
          `${what}: the analyst's answer does not carry the claim it was given`,
        );
      }
    }
    note(out);
  }

  // LLM calls whose answer never counted (lost, late or redelivered) still belong to a requested step; so does the
  // self-check repair round such a call made (each checked like the counted step's).
  for (const call of unused(ctx, "LLM_CALL")) {
    const c = call.parsed as ReplayDetails<"LLM_CALL"> | undefined;
    const request = c ? requested.get(c.correlation_id) : undefined;
    if (c && request && c.role === request.role && c.agent_id === request.agentId) ctx.used.add(call.n);
  }
  for (const x of unused(ctx, "CLAIMS_SELF_CHECK_FAILED").filter(
    (r) => r.event.state === "RUNNING" && typeof r.event.details.correlation_id === "string",
  )) {
    const request = requested.get(String(x.event.details.correlation_id));
    if (request)
      checkRepairEvent(ctx, s, `the step ${request.correlationId} (its answer did not count)`, x, request, claim, flow);
  }

  const fixerRecords = ctx.mine.filter((x) => x.event.event_type === "AGENT_STEP_FAILED" && "fixer" in x.event.details);
  for (let i = 0; i < Math.max(fixerRecords.length, fixers.length); i++) {
    const x = fixerRecords[i];
    const e = fixers[i];
    if (x) ctx.used.add(x.n);
    if (!x)
      s.incomplete(`the crew hands ${e!.failedRole} to the fixer (${e!.reason}), but no AGENT_STEP_FAILED records it`);
    else if (x.error !== undefined) {
      ctx.reported.add(x.n);
      s.incomplete(`${label(x)} cannot be read: ${x.error}`);
    } else if (!e)
      s.different(`${label(x)} records a fixer stand-in the replayed crew does not make`, x.event.details.fixer);
    else s.compare(`${label(x)} fixer stand-in`, x.event.details.fixer, e);
  }

  if (!end) {
    s.incomplete(
      `the crew does not finish from the ${stepRecords.length} recorded steps: the claim is still running, or a step's event is missing`,
    );
    return undefined;
  }
  s.done(`${stepRecords.length} recorded steps replayed: ${end.type}`);
  return end;
}

/** An answered step was an LLM call the worker recorded: same correlation, role and agent, whether it succeeded, and its error. */
export function checkLlmCall(
  ctx: Ctx,
  s: Scope,
  what: string,
  inbound: AgentStepCompletedEvent | AgentStepFailedEvent,
  request: AgentStepRequestedEvent | undefined,
): void {
  const { correlationId } = inbound;
  const ok = inbound.type === "agent.step.completed";
  const calls = ctx.mine.filter(
    (x) =>
      x.event.event_type === "LLM_CALL" &&
      (x.parsed as ReplayDetails<"LLM_CALL"> | undefined)?.correlation_id === correlationId,
  );
  if (calls.length === 0) {
    s.incomplete(`${what} answers a step, but no LLM_CALL records the call`);
    return;
  }
  for (const c of calls) ctx.used.add(c.n);
  const matching = calls.filter((c) => {
    const d = c.parsed as ReplayDetails<"LLM_CALL">;
    return (
      (request === undefined || (d.role === request.role && d.agent_id === request.agentId)) &&
      d.ok === ok &&
      same(d.error, ok ? undefined : (inbound as AgentStepFailedEvent).error)
    );
  });
  s.expect(request !== undefined, `${what} answers a step the replayed crew never requested`);
  s.expect(
    matching.length > 0,
    `${what}: its LLM_CALL (${calls.map(label).join(", ")}) names another role or agent, says ok=${String(!ok)}, or records another error`,
  );
}

export function crewFailed(
  ctx: Ctx,
  flow: Flow,
  claim: Claim,
  expected: { reason_code: string; states?: string; code?: string; role?: string | undefined; output?: unknown },
  what: string,
): void {
  if (!branch(ctx, "crew", "crew_failed", AFTER_CREW, what)) return;
  const f = enter(ctx, "crew_failed", "crew");
  if (!f) return;
  const s = scope(ctx, "crew");
  const { d, raw, r } = f.CREW_FAILED;
  s.compare(`${label(r)} reason_code`, d.reason_code, expected.reason_code);
  if (expected.states !== undefined)
    s.expect(d.reason.includes(expected.states), `${label(r)} reason does not state the crew's: ${expected.states}`);
  if (expected.code !== undefined) s.compare(`${label(r)} code`, raw.code, expected.code);
  if (expected.role !== undefined) s.compare(`${label(r)} role`, raw.role, expected.role);
  if ("output" in expected) s.compare(`${label(r)} output`, raw.output, expected.output);
  s.done(`${what}: ${expected.reason_code}`);
  review(ctx, flow, d, f.CLAIM_NEEDS_REVIEW, claim);
}
