// Effects the pipeline's services return and the shell performs, in order. Each is idempotent, so an
// effect list saved with a snapshot (the outbox) can be performed again after a crash.
import type { BusEntry } from "../core/claims/events.ts";
import type { ReviewRecord } from "../core/claims/review.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import type { ClaimRecord, ClaimStatus } from "../core/claims/claim-record.ts";
import type { AgentStepMessage, CrewQueueMessage, ProposalMessage } from "./messages.ts";

/** One effect. */
export type Effect =
  /** `delayMs`: a step held for the model, tried again after that long (docs/llm.md). */
  | { kind: "agent_step"; message: AgentStepMessage; delayMs?: number }
  | { kind: "proposal"; message: ProposalMessage }
  | { kind: "crew_event"; claimId: string; message: CrewQueueMessage }
  | { kind: "timer"; claimId: string; dueMs: number }
  | { kind: "extraction"; claimId: string; delayMs?: number }
  | { kind: "audit"; event: AuditEvent }
  | { kind: "claim_update"; claimId: string; patch: Partial<ClaimRecord>; onlyFrom?: ClaimStatus[] }
  | { kind: "publish"; entries: BusEntry[] }
  /** Opens the claim's review (if it has none) and marks it pending on its order's ledger. */
  | { kind: "review_open"; review: ReviewRecord }
  /** The review on the order is closed: automatic refunds on the order may go on. */
  | { kind: "review_closed"; orderId: string; claimId: string; scope?: string };
