// Audit events of one claim, built with the claim's flow ids and the simulation id.
import { createAuditEvent } from "../core/integrity/index.ts";
import type { AuditEvent, AuditEventType, AuditSeverity } from "../core/integrity/index.ts";
import type { ClaimRecord } from "../core/claims/claim-record.ts";

/** Builds an audit event for `record`'s decision flow. */
export function claimAudit(
  record: Pick<ClaimRecord, "dfid" | "root_dfid" | "simulation_id" | "claim_id">,
  type: AuditEventType,
  state: string,
  at: number,
  details: Record<string, unknown> = {},
  severity: AuditSeverity = "INFO",
): AuditEvent {
  return createAuditEvent({
    dfid: record.dfid,
    rootDfid: record.root_dfid,
    type,
    severity,
    state,
    details: { claim_id: record.claim_id, ...details },
    at: new Date(at).toISOString(),
    ...(record.simulation_id ? { simulationId: record.simulation_id } : {}),
  });
}
