import * as z from "zod";
import { PolicyKindSchema } from "../integrity/contracts.ts";
import { ClaimAmountSchema } from "./claim.ts";

/**
 * What the Decision Maker must return: a structured refund proposal (a claim, not a fact).
 * Every field is required (nullable where unknown) so the same schema serves OpenAI structured output.
 * Backend grammars (llama.cpp, Ollama) ignore ranges and lengths, so zod enforces them after parsing:
 * a non-blank order id, an amount a claim could carry (finite, at most 3 decimals, within ±1,000,000:
 * 5e-324 or 1e21 never reach storage, where DynamoDB refuses numbers below 1e-130 — found by npm run chaos on
 * the emulators, where such a proposal failed every save of its claim) and a confidence from 0 to 1. The sign
 * of the amount is the self-check's business (a claim that is itself negative is proposed as claimed and the
 * kernel rejects it).
 */
export const RefundProposalOutputSchema = z
  .object({
    action: PolicyKindSchema,
    order_id: z
      .string()
      .min(1, "order_id must not be empty")
      .max(128, "order_id is longer than 128 characters")
      .refine((s) => s.trim() !== "", "order_id must not be blank"),
    amount_eur: ClaimAmountSchema,
    category: z.string(),
    reason: z.string(),
    confidence: z
      .number("confidence must be a number")
      .min(0, "confidence must be from 0 to 1")
      .max(1, "confidence must be from 0 to 1"),
  })
  .strict();

/** The Decision Maker's structured proposal. */
export type RefundProposalOutput = z.infer<typeof RefundProposalOutputSchema>;

/** The most characters of the compact crew's analysis: the schema caps what the model may spend on it. */
export const COMPACT_ANALYSIS_MAX_CHARS = 300;

/**
 * What the compact crew's Claims Officer returns (docs/llm.md, "Crew shape"): its short assessment first (written
 * before the proposal, capped by the schema), then the refund proposal's fields.
 */
export const ClaimDecisionOutputSchema = z
  .object({
    analysis: z
      .string()
      .max(COMPACT_ANALYSIS_MAX_CHARS, `analysis is longer than ${COMPACT_ANALYSIS_MAX_CHARS} characters`),
    ...RefundProposalOutputSchema.shape,
  })
  .strict();

/** The Claims Officer's structured answer. */
export type ClaimDecisionOutput = z.infer<typeof ClaimDecisionOutputSchema>;

/**
 * The Decision Maker's output a policy proposal was built from (`buildProposal` read backwards): what the claim
 * keeps as its `proposal`. `undefined` for anything that was not built from a valid output.
 */
export function proposalOutputOf(proposal: unknown): RefundProposalOutput | undefined {
  const p = proposal as {
    policy_kind?: unknown;
    params?: { order_id?: unknown; amount_eur?: unknown; category?: unknown; reason?: unknown } | null;
    confidence?: unknown;
  } | null;
  const parsed = RefundProposalOutputSchema.safeParse({
    action: p?.policy_kind,
    order_id: p?.params?.order_id,
    amount_eur: p?.params?.amount_eur,
    category: p?.params?.category,
    reason: p?.params?.reason,
    confidence: p?.confidence,
  });
  return parsed.success ? parsed.data : undefined;
}

/** An item the text names and the units it counts (null: it does not count them). */
const ExtractedItemSchema = z.object({ name: z.string(), quantity: z.number().nullable() }).strict();

/**
 * What extraction of free text must return; nulls say the text did not contain the field. `items` (the items the
 * text names, docs/llm.md#items-and-lines) is absent from answers recorded before extraction read items: it reads as
 * null, and such an answer gives the claim it gave then.
 */
export const ClaimExtractionOutputSchema = z
  .object({
    order_id: z.string().nullable(),
    amount_eur: z.number().nullable(),
    category: z.string().nullable(),
    reason: z.string(),
    purchase_date: z.string().nullable(),
    currency: z.string().nullable(),
    items: z.array(ExtractedItemSchema).nullable().default(null),
  })
  .strict();

/** The extractor's structured output. */
export type ClaimExtractionOutput = z.infer<typeof ClaimExtractionOutputSchema>;

/** An extractor's answer as it may be recorded: `items` absent from answers recorded before extraction read items. */
export type ClaimExtractionAnswer = z.input<typeof ClaimExtractionOutputSchema>;

/** An item of an extraction's output. */
export type ExtractedItem = z.infer<typeof ExtractedItemSchema>;
