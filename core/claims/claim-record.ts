import * as z from "zod";
import { ClaimInputSchema, ClaimSchema } from "./claim.ts";
import { ClaimExtractionOutputSchema, RefundProposalOutputSchema } from "./proposal-output.ts";

/** Lifecycle of a claim (SPEC §7.2). */
export const ClaimStatusSchema = z.enum(["RECEIVED", "RUNNING", "DECIDED", "NEEDS_REVIEW"]);

/** A claim's status. */
export type ClaimStatus = z.infer<typeof ClaimStatusSchema>;

/** Verdict values the kernel returns. */
export const VerdictValueSchema = z.enum(["ACCEPT", "ESCALATE", "REJECT"]);

/** The stored record of one claim: what was submitted, what the crew proposed and what the kernel decided. */
export const ClaimRecordSchema = z.object({
  claim_id: z.string().min(1),
  dfid: z.string().min(1),
  root_dfid: z.string().min(1),
  simulation_id: z.string().optional(),
  label: z.string().optional(),
  status: ClaimStatusSchema,
  input: ClaimInputSchema,
  claim: ClaimSchema.optional(),
  extracted: ClaimExtractionOutputSchema.optional(),
  received_at: z.string(),
  updated_at: z.string(),
  proposal: RefundProposalOutputSchema.optional(),
  verdict: VerdictValueSchema.optional(),
  verdict_id: z.string().optional(),
  reason_code: z.string().optional(),
  reason: z.string().optional(),
  executed: z.boolean().optional(),
});

/** A stored claim. */
export type ClaimRecord = z.infer<typeof ClaimRecordSchema>;

/** The public view of a claim returned by `GET /claims/{id}` (SPEC §7.2). */
export function claimView(record: ClaimRecord): Record<string, unknown> {
  return {
    claim_id: record.claim_id,
    status: record.status,
    ...(record.verdict ? { verdict: record.verdict } : {}),
    ...(record.reason_code ? { reason_code: record.reason_code } : {}),
    ...(record.reason ? { reason: record.reason } : {}),
    ...(record.extracted ? { extracted: record.extracted } : {}),
    ...(record.proposal ? { proposal: record.proposal } : {}),
    ...(record.executed !== undefined ? { executed: record.executed } : {}),
    dfid: record.dfid,
    ...(record.simulation_id ? { simulation_id: record.simulation_id } : {}),
  };
}
