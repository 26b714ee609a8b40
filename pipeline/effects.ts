// Effects the pipeline's services return and the shell performs, in order. Each is idempotent, so an
// effect list saved with a snapshot (the outbox) can be performed again after a crash.
import { type PersonDecision } from "../core/kernel/index.ts";
import type { BusEntry } from "../core/kernel/events.ts";
import type { ReviewRecord } from "../core/kernel/review.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import type { ClaimRecord, ClaimStatus } from "../core/kernel/claim-record.ts";
import type { AgentStepMessage, CrewQueueMessage, ProposalMessage } from "./messages.ts";

/** One effect. */
export type Effect =
  /**
   * `delayMs`: a step held for the model, tried again after that long (docs/llm.md). `witness`: the last effect of
   * an orchestrator step's outbox that is not marked once performed (the answer to it proves the outbox performed),
   * naming the message that made the step, whose redelivery performs it again: `start`, or the correlation id of
   * the answer (pipeline/decide/outbox.ts).
   */
  | { kind: "agent_step"; message: AgentStepMessage; delayMs?: number; witness?: string }
  | { kind: "proposal"; message: ProposalMessage }
  | { kind: "crew_event"; claimId: string; message: CrewQueueMessage }
  | { kind: "timer"; claimId: string; dueMs: number }
  | { kind: "extraction"; claimId: string; delayMs?: number }
  | { kind: "audit"; event: AuditEvent }
  | { kind: "claim_update"; claimId: string; patch: Partial<ClaimRecord>; onlyFrom?: ClaimStatus[] }
  | { kind: "publish"; entries: BusEntry[] }
  /** Opens the claim's review (if it has none) and marks it pending on its order's ledger. */
  | { kind: "review_open"; review: ReviewRecord }
  /**
   * The review on the order is closed: automatic refunds on the order may go on — unless the person's `decision`
   * binds the order (a DENY, an APPROVE of less than proposed), recorded on its ledger in the same write.
   */
  | { kind: "review_closed"; orderId: string; claimId: string; scope?: string; decision?: PersonDecision }
  /** The claim's reservation on the order is released: its failed refund was closed unpaid (docs/payments.md). */
  | { kind: "refund_released"; orderId: string; claimId: string; scope?: string };
