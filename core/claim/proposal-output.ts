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
/**
 * One line of the order a proposal refunds (docs/kernel.md#orders-with-lines): its `line_id` (one of the claim's
 * lines), how many units (null: all the claim's units of it) and the amount in the order's currency (major units).
 * The kernel validates each line against the order as it does the claim's lines.
 */
export const ProposedLineSchema = z
  .object({
    line_id: z.string().min(1, "line_id must not be empty").max(64, "line_id is longer than 64 characters"),
    quantity: z.number().nullable(),
    amount: ClaimAmountSchema,
  })
  .strict();

/** A proposed line. */
export type ProposedLine = z.infer<typeof ProposedLineSchema>;

/**
 * What the Decision Maker proposes per line: absent (or null) when it proposes for the claim as a whole. No bound in the
 * schema a model is sent (strict mode and llama.cpp grammars differ on array bounds); a proposal keeps at most 50.
 */
const ProposedLinesSchema = z.array(ProposedLineSchema);

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
    /** Per line (docs/kernel.md#orders-with-lines); absent from every proposal made before proposals had lines. */
    lines: ProposedLinesSchema.max(50, "a proposal names at most 50 lines").nullable().optional(),
  })
  .strict();

/** The Decision Maker's structured proposal. */
export type RefundProposalOutput = z.infer<typeof RefundProposalOutputSchema>;

/**
 * The proposal as a structured-output endpoint must answer it: every field present (strict mode), `lines` null when
 * the proposal is for the claim as a whole. An answer without `lines` (the rules model's, which proposes per line only
 * for a claim that names its lines) reads as null.
 */
export const RefundProposalAnswerSchema = RefundProposalOutputSchema.extend({
  lines: ProposedLinesSchema.nullable().default(null),
});

/**
 * The proposal a step passes on: its `lines` left out when null or empty, so a proposal for the claim as a whole is
 * exactly what it was before proposals had lines (its id, its audit). Anything that is not an object is passed as is.
 */
export function proposalForCrew(value: unknown): unknown {
  if (value === null || typeof value !== "object" || !("lines" in value)) return value;
  const { lines, ...rest } = value as { lines?: unknown };
  return lines === null || lines === undefined || (Array.isArray(lines) && lines.length === 0) ? rest : value;
}

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

/** The Claims Officer's answer as a structured-output endpoint must give it (see `RefundProposalAnswerSchema`). */
export const ClaimDecisionAnswerSchema = ClaimDecisionOutputSchema.extend({
  lines: ProposedLinesSchema.nullable().default(null),
});

/**
 * The Decision Maker's output a policy proposal was built from (`buildProposal` read backwards): what the claim
 * keeps as its `proposal`. `undefined` for anything that was not built from a valid output.
 */
export function proposalOutputOf(proposal: unknown): RefundProposalOutput | undefined {
  const p = proposal as {
    policy_kind?: unknown;
    params?: {
      order_id?: unknown;
      amount_eur?: unknown;
      category?: unknown;
      reason?: unknown;
      lines?: unknown;
    } | null;
    confidence?: unknown;
  } | null;
  const parsed = RefundProposalOutputSchema.safeParse({
    action: p?.policy_kind,
    order_id: p?.params?.order_id,
    amount_eur: p?.params?.amount_eur,
    category: p?.params?.category,
    reason: p?.params?.reason,
    confidence: p?.confidence,
    ...(p?.params?.lines === undefined ? {} : { lines: p.params.lines }),
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
