// Audit events of one claim, built with the claim's flow ids and the simulation id; their details are typed by
// the schema of their type (core/history/audit-events.ts).
import { auditEvent } from "../../core/history/audit-events.ts";
import type { AuditDetailsInput, ClaimAuditDetails, ClaimAuditEventType } from "../../core/history/audit-events.ts";
import type { AuditEvent, AuditSeverity } from "../../core/integrity/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";

/** Builds an audit event of type `type` for `record`'s decision flow; `details` must follow that type's schema. */
export function claimAudit<T extends ClaimAuditEventType>(
  record: Pick<ClaimRecord, "dfid" | "root_dfid" | "simulation_id" | "claim_id">,
  type: T,
  state: string,
  at: number,
  details: ClaimAuditDetails<T>,
  severity: AuditSeverity = "INFO",
): AuditEvent {
  return auditEvent({
    dfid: record.dfid,
    rootDfid: record.root_dfid,
    type,
    severity,
    state,
    // The details plus the record's claim id are the type's details (tsc cannot see it through the generic).
    details: { claim_id: record.claim_id, ...details } as AuditDetailsInput<T>,
    at: new Date(at).toISOString(),
    ...(record.simulation_id ? { simulationId: record.simulation_id } : {}),
  });
}

/** The event of the step that sent a claim to review (recorded before CLAIM_NEEDS_REVIEW, with its code and reason). */
export type ReviewCauseEvent = {
  [T in "CLAIM_EXTRACTION_FAILED" | "CREW_FAILED" | "CLAIMS_SELF_CHECK_FAILED"]: {
    type: T;
    details: Omit<ClaimAuditDetails<T>, "reason_code" | "reason">;
  };
}["CLAIM_EXTRACTION_FAILED" | "CREW_FAILED" | "CLAIMS_SELF_CHECK_FAILED"];

/** What the sweep adds to CLAIM_NEEDS_REVIEW beyond the review's code, reason and id. */
export type NeedsReviewDetails = Omit<ClaimAuditDetails<"CLAIM_NEEDS_REVIEW">, "reason_code" | "reason" | "review_id">;
