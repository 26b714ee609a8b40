// Whether a crew step's stored outbox is known to be performed without its marker (docs/architecture.md,
// "The step's outbox"). The orchestrator performs an outbox in order, so whoever saw its LAST effect arrive knows
// every effect before it was performed: the worker's answer to the step's one agent step, the hold the worker
// recorded on the claim for it, or the kernel's verdict on the step's one proposal, recorded on the claim. An outbox
// whose last effect is such a witness needs no marker: the next step supersedes it, or a witness proves it. Any
// other outbox is marked once performed, as before. Unproven is pending: performed again (fail-closed). Pure.
import type { ClaimRecord } from "../../core/claims/claim-record.ts";
import { verdictIdFor } from "../../core/claims/execution.ts";
import type { Sha256Hex } from "../../core/crew/hash.ts";
import { idempotencyKeyOf } from "../../core/integrity/index.ts";
import type { Effect } from "../effects.ts";
import type { CrewQueueMessage } from "../messages.ts";

/** The last effect of an outbox, when its arrival can be seen later: its only agent step, or its only proposal. */
type Witness =
  | { readonly kind: "agent_step"; readonly correlationId: string }
  | { readonly kind: "proposal"; readonly proposal: unknown; readonly dfid: string };

/** How an outbox is known to be performed without its marker. */
export type OutboxProof =
  /** An incoming message answers the outbox's agent step. */
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
 * The witness of an outbox: its last effect, when that is its only agent step (sent alone, so its answer proves its
 * own send) or its only proposal. `undefined`: no later message or record can prove this outbox, it needs a marker.
 */
function witnessOf(outbox: readonly Effect[]): Witness | undefined {
  const last = outbox.at(-1);
  if (last?.kind === "agent_step" && outbox.filter((e) => e.kind === "agent_step").length === 1)
    return { kind: "agent_step", correlationId: last.message.request.correlationId };
  if (last?.kind === "proposal" && outbox.filter((e) => e.kind === "proposal").length === 1)
    return { kind: "proposal", proposal: last.message.proposal, dfid: last.message.dfid };
  return undefined;
}

/**
 * Whether the outbox still to perform after a save needs its marker: it has effects, and no witness can prove it
 * performed later. An outbox with a witness is proven by it, or superseded by the step its answer makes.
 */
export function outboxNeedsMarker(outbox: readonly Effect[]): boolean {
  return outbox.length > 0 && witnessOf(outbox) === undefined;
}

/** How `evidence` proves the stored `outbox` performed, or `undefined` when it does not (then it is performed again). */
export function outboxProof(outbox: readonly Effect[], evidence: OutboxEvidence): OutboxProof | undefined {
  const witness = witnessOf(outbox);
  if (!witness) return undefined;
  if (witness.kind === "agent_step") {
    const answered = (evidence.messages ?? []).some(
      (m) =>
        (m.type === "agent.step.completed" || m.type === "agent.step.failed") &&
        m.correlationId === witness.correlationId,
    );
    if (answered) return "answered";
    return evidence.claim?.llm_hold?.key === witness.correlationId ? "held" : undefined;
  }
  const verdictId = evidence.claim?.verdict_id;
  if (verdictId === undefined) return undefined;
  return verdictId === verdictIdFor(idempotencyKeyOf(witness.proposal, witness.dfid, evidence.sha256))
    ? "decided"
    : undefined;
}

/**
 * The outbox in the order that lets its answer prove it: every agent step last (in their order), everything else
 * in its order before them. An agent step only asks the worker, whose answer comes back after this step.
 */
export function agentStepsLast(effects: readonly Effect[]): Effect[] {
  return [...effects.filter((e) => e.kind !== "agent_step"), ...effects.filter((e) => e.kind === "agent_step")];
}
