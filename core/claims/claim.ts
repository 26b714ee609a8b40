import * as z from "zod";
import { parseIsoMs } from "../integrity/time.ts";

/** ISO-8601 timestamp or date (e.g. `2026-05-20` or `2026-05-20T10:00:00Z`); one without an offset is UTC. */
export const IsoDateSchema = z.string().refine((s) => parseIsoMs(s) !== undefined, {
  message: "must be an ISO-8601 date or timestamp, e.g. 2026-05-20 or 2026-05-20T10:00:00Z",
});

/** A structured refund claim as a customer or intake channel submits it; the kernel, not this schema, judges the amount. */
export const ClaimSchema = z
  .object({
    order_id: z.string().trim().min(1, "order_id is required").max(128),
    amount_eur: z.number().refine(Number.isFinite, "amount_eur must be a finite number"),
    category: z.string().trim().min(1).max(64),
    reason: z.string().max(4000).default(""),
    purchase_date: IsoDateSchema.optional(),
    currency: z.string().trim().length(3).optional(),
    customer_id: z.string().max(128).optional(),
  })
  .strict();

/** A structured claim after validation. */
export type Claim = z.infer<typeof ClaimSchema>;

/** Free-text claims are bounded so that a prompt stays small. */
export const ClaimTextSchema = z.string().trim().min(1, "claim_text is empty").max(8000, "claim_text is longer than 8000 characters");

/** The input of a claim submission: exactly one of `claim` or `claim_text`. */
export const ClaimInputSchema = z.union([
  z.object({ claim: ClaimSchema }).strict(),
  z.object({ claim_text: ClaimTextSchema }).strict(),
]);

/** Either a structured claim or free text. */
export type ClaimInput = z.infer<typeof ClaimInputSchema>;
