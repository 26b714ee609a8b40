// Replay: re-runs a recorded decision flow from its audit events — the crew from its recorded inbound
// events, the proposal, the self-check and the kernel from its recorded inputs — without calling a
// model, and says whether every step reproduces byte for byte (after canonicalize).
import * as z from "zod";
import { canonicalize, createCrewSession, frozenClock } from "../crew/index.ts";
import { buildProposal } from "../integrity/index.ts";
import type { AuditEvent } from "../integrity/index.ts";
import { claimsCrewGraph, ClaimsCrewInputSchema, DEFAULT_CLAIMS_CREW_TIMEOUTS } from "./crew.ts";
import { buildVerdictRecord } from "./execution.ts";
import { decideClaim } from "./kernel.ts";
import type { DecideClaimInput } from "./kernel.ts";
import { RefundProposalOutputSchema } from "./proposal-output.ts";
import { selfCheck } from "./self-check.ts";
import type { ResponsibilityContract } from "../integrity/index.ts";

/** One compared step of a replay. */
export interface ReplayStep {
  step: "crew" | "proposal" | "self_check" | "kernel";
  identical: boolean;
  detail: string;
  recorded?: unknown;
  replayed?: unknown;
}

/** The result of replaying one claim. */
export type ReplayResult =
  | { ok: true; claimId: string; identical: boolean; verdict?: string; reasonCode?: string; steps: ReplayStep[] }
  | { ok: false; claimId: string; code: "NO_EVENTS" | "NOT_REPLAYABLE"; message: string };

const CrewStartedSchema = z.object({ root_input: z.unknown(), now_ms: z.number(), timeouts: z.object({ analystMs: z.number(), decisionMs: z.number(), fixerMs: z.number() }).optional() }).passthrough();
const InboundSchema = z.object({ inbound: z.record(z.string(), z.unknown()), now_ms: z.number() }).passthrough();
const DecisionSchema = z.object({ output: z.unknown(), proposal: z.object({ agent_id: z.string(), created_at: z.string(), valid_for_ms: z.number(), dfid: z.string() }).passthrough() }).passthrough();
const KernelInputsSchema = z.object({ kernel_inputs: z.record(z.string(), z.unknown()) }).passthrough();

const same = (a: unknown, b: unknown) => canonicalize(a) === canonicalize(b);

/** Replays the decision flow of `claimId` from its audit events (the claim's own dfid). */
export function replayClaim(claimId: string, events: readonly AuditEvent[], opts: { responsibility?: ResponsibilityContract } = {}): ReplayResult {
  const mine = events.filter((e) => e.details.claim_id === claimId);
  if (mine.length === 0) return { ok: false, claimId, code: "NO_EVENTS", message: `no audit events for claim ${claimId}` };
  const started = mine.find((e) => e.event_type === "CREW_STARTED");
  if (!started) {
    const review = mine.find((e) => e.event_type === "CLAIM_NEEDS_REVIEW");
    return { ok: false, claimId, code: "NOT_REPLAYABLE", message: review ? `the claim ended in NEEDS_REVIEW before its crew started (${String(review.details.reason_code)}): nothing to replay` : "the crew of this claim never started" };
  }
  const start = CrewStartedSchema.parse(started.details);
  const steps: ReplayStep[] = [];

  // 1. The crew, from its recorded inbound events, each at its recorded instant.
  const clock = frozenClock(start.now_ms);
  const session = createCrewSession({ crewId: claimId, graph: claimsCrewGraph(start.timeouts ?? DEFAULT_CLAIMS_CREW_TIMEOUTS), clock });
  const out = session.start(start.root_input as never, { description: `Decide refund claim ${claimId}` });
  for (const e of mine) {
    if (e.event_type !== "AGENT_STEP" && e.event_type !== "AGENT_STEP_FAILED") continue;
    const parsed = InboundSchema.safeParse(e.details);
    if (!parsed.success) continue;
    clock.set(parsed.data.now_ms);
    out.push(...session.deliver(parsed.data.inbound));
  }
  const completed = out.find((e) => e.type === "crew.completed");
  const failed = out.find((e) => e.type === "crew.failed");
  // A self-check failure the Decision Maker repaired in its own step is audited as RUNNING; only the final one ends the claim.
  const finalCheckFailed = (e: AuditEvent) => e.event_type === "CLAIMS_SELF_CHECK_FAILED" && e.state === "NEEDS_REVIEW";
  const decision = mine.find((e) => e.event_type === "AGENT_DECISION" || finalCheckFailed(e));
  const recordedOutput = decision ? (decision.details.output as unknown) : undefined;
  if (!completed) {
    const recordedFailure = mine.some((e) => e.event_type === "CREW_FAILED");
    steps.push({ step: "crew", identical: Boolean(failed) === recordedFailure, detail: failed ? `crew failed again: ${failed.reason}` : "crew did not finish from the recorded events" });
    return { ok: true, claimId, identical: steps.every((s) => s.identical), steps };
  }
  steps.push({ step: "crew", identical: same(completed.output, recordedOutput), detail: "crew output from recorded agent answers", recorded: recordedOutput, replayed: completed.output });

  // 2. Self-check, then the proposal as it crossed the wall.
  const output = RefundProposalOutputSchema.safeParse(completed.output);
  if (!output.success) return { ok: true, claimId, identical: false, steps: [...steps, { step: "proposal", identical: false, detail: "crew output is not a refund proposal" }] };
  const decisionEvent = mine.find((e) => e.event_type === "AGENT_DECISION");
  const responsibility = opts.responsibility ?? recordedResponsibility(mine);
  if (responsibility) {
    const claim = ClaimsCrewInputSchema.safeParse(start.root_input);
    const check = claim.success ? selfCheck(output.data, responsibility, claim.data.claim) : { ok: false as const, failures: [{ message: "the recorded crew input holds no claim" }] };
    const recordedFail = mine.some(finalCheckFailed);
    steps.push({ step: "self_check", identical: check.ok === !recordedFail, detail: check.ok ? "passed" : `failed: ${check.failures.map((f) => f.message).join("; ")}` });
  }
  if (!decisionEvent) return { ok: true, claimId, identical: steps.every((s) => s.identical), steps };
  const recorded = DecisionSchema.parse(decisionEvent.details);
  const proposal = buildProposal({ dfid: recorded.proposal.dfid, agentId: recorded.proposal.agent_id, output: output.data, createdAt: recorded.proposal.created_at, validForMs: recorded.proposal.valid_for_ms });
  steps.push({ step: "proposal", identical: same(proposal, recorded.proposal), detail: `idempotency key ${proposal.idempotency_key.slice(0, 16)}…`, recorded: recorded.proposal, replayed: proposal });

  // 3. The kernel, from the inputs it recorded, on the replayed proposal.
  const submitted = mine.find((e) => e.event_type === "PROPOSAL_SUBMITTED");
  const verdictEvent = mine.find((e) => e.event_type === "KERNEL_VERDICT");
  if (!submitted || !verdictEvent) return { ok: true, claimId, identical: steps.every((s) => s.identical), steps };
  const inputs = KernelInputsSchema.parse(submitted.details).kernel_inputs as Record<string, unknown>;
  const kernelInput = { ...inputs, proposal, order: inputs.order ?? undefined, ledgerEntry: inputs.ledgerEntry ?? undefined } as unknown as DecideClaimInput;
  const verdict = decideClaim(kernelInput);
  const record = buildVerdictRecord({ verdict, proposal, claimId, dfid: String(inputs.dfid), decidedAt: kernelInput.decidedAt, ...(typeof verdictEvent.details.simulation_id === "string" ? { simulationId: verdictEvent.details.simulation_id } : {}) });
  const replayed = { ...record, layer: verdict.layer, checks: verdict.checks };
  const { claim_id: _c, ...recordedVerdict } = verdictEvent.details;
  const replayedView = { ...replayed, simulation_id: verdictEvent.details.simulation_id };
  const { claim_id: _d, ...replayedVerdict } = replayedView as Record<string, unknown>;
  steps.push({ step: "kernel", identical: same(replayedVerdict, recordedVerdict), detail: `${verdict.verdict} ${verdict.reason_code} at layer ${verdict.layer}`, recorded: recordedVerdict, replayed: replayedVerdict });
  return { ok: true, claimId, identical: steps.every((s) => s.identical), verdict: verdict.verdict, reasonCode: verdict.reason_code, steps };
}

function recordedResponsibility(events: readonly AuditEvent[]): ResponsibilityContract | undefined {
  const submitted = events.find((e) => e.event_type === "PROPOSAL_SUBMITTED");
  const r = (submitted?.details.kernel_inputs as { responsibility?: ResponsibilityContract } | undefined)?.responsibility;
  return r;
}
