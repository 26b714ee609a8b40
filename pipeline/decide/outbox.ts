// Whether a crew step's stored outbox is known to be performed without its marker (docs/architecture.md). The
// orchestrator performs an outbox in order, so whoever sees its LAST effect arrive knows every effect before it was
// performed: the worker's answer to the step's one agent step, the hold the worker recorded on the claim for it, or
// the kernel's verdict on the step's one proposal, recorded on the claim. On the normal path (the crew's start, an
// answer that proved the step before) the orchestrator sends the step's one agent step last, flagged as the witness
// with the message that made the step, and writes no marker: the answer proves the step, and the step the answer
// makes supersedes it; the last step's proposal is proven by the claim's verdict. Every other outbox is marked once
// performed, as before. An outbox neither marked nor proven is performed again (fail-closed) by the redelivery of
// the message that made it; anything else leaves its witness step alone while it is in flight (`outboxRepair`).
// Pure.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { verdictIdFor } from "../../core/kernel/execution.ts";
import type { Sha256Hex } from "../../core/crew/hash.ts";
import { idempotencyKeyOf } from "../../core/integrity/index.ts";
import type { Effect } from "../effects.ts";
import type { CrewQueueMessage } from "../messages.ts";

type AgentStepEffect = Extract<Effect, { kind: "agent_step" }>;

/** The last effect of an outbox, when its arrival can be seen later: its flagged agent step, or its only proposal. */
type Witness =
  | { readonly kind: "agent_step"; readonly step: AgentStepEffect }
  | { readonly kind: "proposal"; readonly proposal: unknown; readonly dfid: string };

/** How an outbox is known to be performed without its marker. */
export type OutboxProof =
  /** An incoming message answers the outbox's witness agent step. */
  | "answered"
  /** The claim is on hold for that agent step: the worker received it. */
  | "held"
  /** The claim's verdict is the kernel's decision of the outbox's proposal: the kernel received it. */
  | "decided";

/** What can show an outbox performed: the messages being handled, and the claim as read now. */
export interface OutboxEvidence {
  readonly messages?: readonly CrewQueueMessage[];
  readonly claim?: ClaimRecord | undefined;
  /** The hash the kernel keys proposals with (`PipelineDeps.sha256`). */
  readonly sha256?: Sha256Hex | undefined;
}

/**
 * The witness of an outbox: its last effect, when that is its only agent step, flagged by the orchestrator (sent
 * alone, so its answer proves its own send; flagged only on the normal path, so the step was made by a start or an
 * answer), or its only proposal. `undefined`: nothing that comes later can prove this outbox, it needs a marker.
 */
function witnessOf(outbox: readonly Effect[]): Witness | undefined {
  const last = outbox.at(-1);
  if (
    last?.kind === "agent_step" &&
    typeof last.witness === "string" &&
    outbox.filter((e) => e.kind === "agent_step").length === 1
  )
    return { kind: "agent_step", step: last };
  if (last?.kind === "proposal" && outbox.filter((e) => e.kind === "proposal").length === 1)
    return { kind: "proposal", proposal: last.message.proposal, dfid: last.message.dfid };
  return undefined;
}

/** The `witness` naming the crew's start as the message that made a step. */
export const MADE_BY_START = "start";

/** The maker a message would be, were it the one that made a step: `start`, or an answer's correlation id. */
function makerOf(message: CrewQueueMessage): string | undefined {
  if (message.type === "claim.start") return MADE_BY_START;
  if (message.type === "agent.step.completed" || message.type === "agent.step.failed") return message.correlationId;
  return undefined;
}

/**
 * The outbox of a step on the normal path, ready to be saved unmarked: every agent step last (an agent step only
 * asks the worker, whose answer comes back after this step), and a single one flagged as the witness, naming `maker`
 * (`MADE_BY_START`, or the correlation id of the answer that made the step).
 */
export function witnessedOutbox(effects: readonly Effect[], maker: string): Effect[] {
  const steps = effects.filter((e) => e.kind === "agent_step");
  const rest = effects.filter((e) => e.kind !== "agent_step");
  if (steps.length !== 1) return [...rest, ...steps];
  return [...rest, { ...steps[0]!, witness: maker }];
}

/** The correlation id of the outbox's witness agent step: what the answer that proves the outbox answers. */
export function witnessStepId(outbox: readonly Effect[]): string | undefined {
  const witness = witnessOf(outbox);
  return witness?.kind === "agent_step" ? witness.step.message.request.correlationId : undefined;
}

/**
 * Whether the outbox still to perform after a save needs its marker: it has effects, and no witness can prove it
 * performed later. An outbox with a witness is proven by it, or superseded by the step its answer makes.
 */
export function outboxNeedsMarker(outbox: readonly Effect[]): boolean {
  return outbox.length > 0 && witnessOf(outbox) === undefined;
}

/** How `evidence` proves the stored `outbox` performed, or `undefined` when it does not. */
export function outboxProof(outbox: readonly Effect[], evidence: OutboxEvidence): OutboxProof | undefined {
  const witness = witnessOf(outbox);
  if (!witness) return undefined;
  if (witness.kind === "agent_step") {
    const id = witness.step.message.request.correlationId;
    const answered = (evidence.messages ?? []).some(
      (m) => (m.type === "agent.step.completed" || m.type === "agent.step.failed") && m.correlationId === id,
    );
    if (answered) return "answered";
    return evidence.claim?.llm_hold?.key === id ? "held" : undefined;
  }
  const verdictId = evidence.claim?.verdict_id;
  if (verdictId === undefined) return undefined;
  return verdictId === verdictIdFor(idempotencyKeyOf(witness.proposal, witness.dfid, evidence.sha256))
    ? "decided"
    : undefined;
}

/**
 * What the messages being handled perform of an outbox nothing proves. The redelivery of the message that made a
 * witnessed step (its `witness`: a start, or the answer to the step before) performs it all: its first delivery may
 * have died before sending the step. Anything else (a tick, a duplicate or late answer to an older step) never made
 * this step and proves nothing: while the witness step is in flight, before its deadline, it performs nothing
 * (`undefined`: the answer proves the outbox; were the request lost with its maker's last delivery, the deadline
 * stands in, as for a worker that died with its step) — sending it again would be a second model call for a step a
 * slow model is still answering; from its deadline, when a tick times the step out, the outbox without that step.
 * An outbox with no witness step (made otherwise, or a proposal): all of it, as before.
 */
export function outboxRepair(
  outbox: readonly Effect[],
  messages: readonly CrewQueueMessage[],
  nowMs: number,
): Effect[] | undefined {
  const witness = witnessOf(outbox);
  if (witness?.kind !== "agent_step") return [...outbox];
  if (messages.some((m) => makerOf(m) === witness.step.witness)) return [...outbox];
  const ticked = messages.flatMap((m) => (m.type === "crew.tick" ? [m.nowMs] : []));
  const now = Math.max(nowMs, ...ticked);
  const deadline = witness.step.message.request.deadlineMs;
  if (deadline === undefined || now < deadline) return undefined;
  return outbox.slice(0, -1);
}
