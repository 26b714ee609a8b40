// The audit event model (docs/audit.md): every step of a decision flow appends one event under its DFID.
import * as z from "zod";
import { AuditEventError } from "./errors.ts";
import type { VerdictKind } from "./verdict.ts";

/** Every audit event type; core/history/audit-events.ts defines the details of each (a type missing there does not compile). */
export const AUDIT_EVENT_TYPES = [
  "SIMULATION_START",
  "SIMULATION_END",
  "CLAIM_RECEIVED",
  "CLAIM_EXTRACTED",
  "CLAIM_EXTRACTION_FAILED",
  "CLAIM_HELD",
  "CLAIM_RESUMED",
  "CREW_STARTED",
  "AGENT_STEP",
  "AGENT_STEP_FAILED",
  "AGENT_DECISION",
  "LLM_CALL",
  "CREW_COMPLETED",
  "CREW_FAILED",
  "CLAIMS_SELF_CHECK_FAILED",
  "CLAIM_TRIAGED",
  "PROPOSAL_SUBMITTED",
  "KERNEL_VERDICT",
  "CLAIM_REFUND_EXECUTED",
  "CLAIM_REFUND_NOT_EXECUTED",
  "CLAIM_NEEDS_REVIEW",
  "REVIEW_REQUESTED",
  "REVIEW_DECIDED",
  "REFUND_SETTLED",
  "REFUND_FAILED",
  "REVIEW_APPROVAL_RECORDED",
  "PERSONAL_DATA_ERASED",
  "RETURN_REQUESTED",
  "RETURN_EVENT_RECORDED",
  "RETURN_COMPLETED",
] as const;

/** The audit event type schema. */
const AuditEventTypeSchema = z.enum(AUDIT_EVENT_TYPES);

/** An audit event type. */
export type AuditEventType = z.infer<typeof AuditEventTypeSchema>;

/** Audit severities, lowest first. */
const AuditSeveritySchema = z.enum(["DEBUG", "INFO", "WARN", "ERROR"]);

/** An audit severity. */
export type AuditSeverity = z.infer<typeof AuditSeveritySchema>;

/**
 * One audit event. `state` is the claim status after the step (`RECEIVED`, `RUNNING`, `DECIDED`,
 * `NEEDS_REVIEW`) or the run's state for simulation events; `details` is JSON data and carries
 * `simulation_id` when the flow belongs to a batch run.
 */
export const AuditEventSchema = z
  .object({
    dfid: z.string().min(1),
    root_dfid: z.string().min(1),
    event_type: AuditEventTypeSchema,
    severity: AuditSeveritySchema,
    state: z.string().min(1),
    details: z.record(z.string(), z.unknown()),
    created_at: z.iso.datetime({ offset: true }),
  })
  .strict();

/** An audit event. */
export type AuditEvent = z.infer<typeof AuditEventSchema>;

/** What `createAuditEvent` needs; `rootDfid` defaults to `dfid`, `simulationId` goes into `details.simulation_id`. */
type AuditEventInput = {
  dfid: string;
  rootDfid?: string;
  type: AuditEventType;
  severity?: AuditSeverity;
  state: string;
  details?: Record<string, unknown>;
  at: string;
  simulationId?: string;
};

/** Builds and validates one audit event; throws `AuditEventError` naming what is wrong. */
export function createAuditEvent(input: AuditEventInput): AuditEvent {
  const details: Record<string, unknown> = { ...(input.details ?? {}) };
  if (input.simulationId !== undefined) details.simulation_id = input.simulationId;
  return parseAuditEvent({
    dfid: input.dfid,
    root_dfid: input.rootDfid ?? input.dfid,
    event_type: input.type,
    severity: input.severity ?? "INFO",
    state: input.state,
    details,
    created_at: input.at,
  });
}

/** Validates an unknown value as an audit event (e.g. read back from storage); throws `AuditEventError`. */
export function parseAuditEvent(value: unknown): AuditEvent {
  const parsed = AuditEventSchema.safeParse(value);
  if (!parsed.success)
    throw new AuditEventError(`audit event is invalid: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  return parsed.data;
}

/** The severity a kernel verdict is audited with: INFO for ACCEPT, WARN for ESCALATE and REJECT. */
export function severityForVerdict(verdict: VerdictKind): AuditSeverity {
  return verdict === "ACCEPT" ? "INFO" : "WARN";
}
