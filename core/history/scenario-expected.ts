// What a scenario row expects (docs/config.md): a verdict, its reason code (checked against the verdict it comes
// with), and whether its refund executed at once. On its own so the steps' schema (scenario-steps.ts) shares it.
import { OutcomeKindSchema } from "../integrity/contracts.ts";
import * as z from "zod";
import { LLM_FAILURE_CODES } from "../llm/errors.ts";
import type { ClaimFromExtractionFailureCode, TextExtractionFailureCode } from "../extraction/extraction.ts";
import { ORDER_SOURCE_UNAVAILABLE, REASON_CODES } from "../kernel/reason-codes.ts";
import type { ClaimReasonCode } from "../kernel/reason-codes.ts";
import { closestMatch } from "../claim/yaml-source.ts";
import { ExpectedOutcomeSchema } from "./expected-outcome.ts";
import type { ExpectedOutcome } from "./expected-outcome.ts";

const EXTRACTION_CODES = [
  "EMPTY_TEXT",
  "NO_ORDER_ID",
  "AMBIGUOUS_ORDER_ID",
  "NO_AMOUNT",
  "AMBIGUOUS_AMOUNT",
  "AMOUNT_NOT_IN_TEXT",
  "UNSUPPORTED_CURRENCY",
  "ORDER_ID_NOT_IN_TEXT",
  "INVALID_CLAIM",
] as const satisfies readonly (TextExtractionFailureCode | ClaimFromExtractionFailureCode)[];
// Every extraction failure code is listed (a new one fails the type check here until it is).
const _everyExtractionCode: [
  Exclude<TextExtractionFailureCode | ClaimFromExtractionFailureCode, (typeof EXTRACTION_CODES)[number]>,
] extends [never]
  ? true
  : never = true;
void _everyExtractionCode;

/** Reason codes a claim can end `NEEDS_REVIEW` with: extraction, LLM, crew, self-check, sweep, order-data and order-source failures. */
export const NEEDS_REVIEW_REASON_CODES: readonly string[] = [
  "EXTRACTION_FAILED",
  ...EXTRACTION_CODES,
  ...LLM_FAILURE_CODES,
  "CREW_FAILED",
  "CREW_OUTPUT_INVALID",
  "CLAIMS_SELF_CHECK_FAILED",
  "STALLED",
  "CLAIM_TIMED_OUT",
  "ORDER_DATA_INVALID",
  ORDER_SOURCE_UNAVAILABLE,
];

const VERDICTS = ExpectedOutcomeSchema.options;

const VerdictSchema = z.enum(VERDICTS, {
  error: (issue) => {
    const written = String(issue.input);
    const close = closestMatch(written, VERDICTS);
    return `unknown verdict ${JSON.stringify(issue.input)}: expected one of ${VERDICTS.join(", ")}${close ? ` — did you mean ${close}?` : ""}`;
  },
});

/** Checks an expected reason code against the verdict it is expected with (kernel codes carry their verdict). */
function reasonCodeProblem(verdict: ExpectedOutcome, code: string): string | undefined {
  if (verdict === "NEEDS_REVIEW") {
    if (NEEDS_REVIEW_REASON_CODES.includes(code)) return undefined;
    if (Object.hasOwn(REASON_CODES, code))
      return `${code} is a kernel reason code (verdict ${REASON_CODES[code as ClaimReasonCode].verdict}); a claim ends NEEDS_REVIEW with one of ${NEEDS_REVIEW_REASON_CODES.join(", ")}`;
    const close = closestMatch(code, NEEDS_REVIEW_REASON_CODES);
    return `unknown reason code ${JSON.stringify(code)} for NEEDS_REVIEW${close ? ` — did you mean ${close}?` : `: expected one of ${NEEDS_REVIEW_REASON_CODES.join(", ")}`}`;
  }
  if (Object.hasOwn(REASON_CODES, code)) {
    const comes = REASON_CODES[code as ClaimReasonCode].verdict;
    return comes === verdict ? undefined : `reason code ${code} comes with verdict ${comes}, not ${verdict}`;
  }
  const codes = Object.entries(REASON_CODES)
    .filter(([, v]) => v.verdict === verdict)
    .map(([k]) => k);
  const close = closestMatch(code, codes) ?? closestMatch(code, Object.keys(REASON_CODES));
  return `unknown reason code ${JSON.stringify(code)}${close ? ` — did you mean ${close}?` : `: a ${verdict} comes with one of ${codes.join(", ")}`}`;
}

/** A scenario's `expected`: a verdict, or `{ verdict, reason_code?, executed?, outcome? }` (executed: whether its refund was paid at once). */
export const ExpectedSchema = z.preprocess(
  (v) => (typeof v === "string" ? { verdict: v } : v),
  z
    .object({
      verdict: VerdictSchema,
      reason_code: z.string().min(1).optional(),
      /** Whether the claim's refund executed at once (false: an ACCEPT waiting for its return, docs/returns.md). */
      executed: z.boolean().optional(),
      /** What the ACCEPT gives (docs/returns.md#outcomes): REFUND (what a claim without an outcome gets), STORE_CREDIT, EXCHANGE. */
      outcome: OutcomeKindSchema.optional(),
    })
    .strict()
    .superRefine((e, ctx) => {
      const problem = e.reason_code === undefined ? undefined : reasonCodeProblem(e.verdict, e.reason_code);
      if (problem) ctx.addIssue({ code: "custom", path: ["reason_code"], message: problem });
    }),
);
