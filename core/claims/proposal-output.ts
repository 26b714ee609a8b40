import * as z from "zod";

/** Policy kinds an agent may propose. */
export const PolicyKindSchema = z.enum(["REFUND", "REPLACE", "ESCALATE"]);

/** A policy kind. */
export type PolicyKind = z.infer<typeof PolicyKindSchema>;

/**
 * What the Decision Maker must return: a structured refund proposal (a claim, not a fact).
 * Every field is required (nullable where unknown) so the same schema serves OpenAI structured output.
 */
export const RefundProposalOutputSchema = z
  .object({
    action: PolicyKindSchema,
    order_id: z.string().min(1),
    amount_eur: z.number(),
    category: z.string(),
    reason: z.string(),
    confidence: z.number().min(0).max(1),
  })
  .strict();

/** The Decision Maker's structured proposal. */
export type RefundProposalOutput = z.infer<typeof RefundProposalOutputSchema>;

/** What extraction of free text must return; nulls say the text did not contain the field. */
export const ClaimExtractionOutputSchema = z
  .object({
    order_id: z.string().nullable(),
    amount_eur: z.number().nullable(),
    category: z.string().nullable(),
    reason: z.string(),
    purchase_date: z.string().nullable(),
    currency: z.string().nullable(),
  })
  .strict();

/** The extractor's structured output. */
export type ClaimExtractionOutput = z.infer<typeof ClaimExtractionOutputSchema>;
