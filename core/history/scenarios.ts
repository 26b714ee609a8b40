import * as z from "zod";
import { canonicalize, hashHex } from "../crew/index.ts";
import { ClaimSchema, ClaimTextSchema } from "../claim/claim.ts";
import { LLM_FAILURE_CODES } from "../llm/errors.ts";
import type { ClaimFromExtractionFailureCode, TextExtractionFailureCode } from "../extraction/extraction.ts";
import { ORDER_SOURCE_UNAVAILABLE, REASON_CODES } from "../kernel/reason-codes.ts";
import type { ClaimReasonCode } from "../kernel/reason-codes.ts";
import type { ReviewerIdentity } from "../kernel/review.ts";
import { closestMatch, ignoredField, ignoredFields, parseYamlSource, validateYaml } from "../claim/yaml-source.ts";
import { SourceFileError } from "../claim/errors.ts";
import type { IgnoredField } from "../claim/yaml-source.ts";
import type { Claim } from "../claim/claim.ts";

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

const ExpectedSchema = z.preprocess(
  (v) => (typeof v === "string" ? { verdict: v } : v),
  z
    .object({ verdict: VerdictSchema, reason_code: z.string().min(1).optional() })
    .strict()
    .superRefine((e, ctx) => {
      const problem = e.reason_code === undefined ? undefined : reasonCodeProblem(e.verdict, e.reason_code);
      if (problem) ctx.addIssue({ code: "custom", path: ["reason_code"], message: problem });
    }),
);

const ContextSchema = z
  .object({ claim: ClaimSchema.optional(), claim_text: ClaimTextSchema.optional() })
  .strict()
  .superRefine((c, ctx) => {
    if (c.claim !== undefined && c.claim_text !== undefined)
      ctx.addIssue({ code: "custom", message: "context has both claim and claim_text: give one of them" });
    if (c.claim === undefined && c.claim_text === undefined)
      ctx.addIssue({ code: "custom", message: "context needs one of claim (structured) or claim_text (free text)" });
  });

const IdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, "ids hold letters, digits, _ and -");

/** The id DIR sample 35 writes into its labels: `SCENARIO A - Valid…` → `A`. */
export function idFromLabel(label: unknown): string | undefined {
  if (typeof label !== "string") return undefined;
  const m = /^\s*SCENARIO\s+([A-Za-z0-9_-]{1,64})\s*(?:[-–—:]|$)/i.exec(label);
  return m?.[1];
}

const ScenarioRowSchema = z
  .object({
    id: IdSchema.optional(),
    label: z.string().min(1),
    context: ContextSchema,
    expected: ExpectedSchema,
    /** Rows with the same `race` (next to each other) are submitted at once and matched as a group, by count. */
    race: IdSchema.optional(),
    notes: ignoredField("notes for the people reading the file", z.string()),
  })
  .strict()
  .superRefine((row, ctx) => {
    if (row.id === undefined && idFromLabel(row.label) === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["id"],
        message: "id is missing, and the label does not name one (as in 'SCENARIO A - …'): add an id",
      });
    }
  });

/**
 * What a step of `reviews:` may expect: a person's step the review's status after the decision (CLOSED / RETRIED for
 * a failed refund's review), AWAITING_SECOND_APPROVAL for a first approval under four eyes, or REFUSED with the
 * API's code; a payment step the settlement's status after the provider's rehearsed answer (FAILED), or REFUSED.
 */
const ReviewStepOutcomeSchema = z.enum([
  "APPROVED",
  "DENIED",
  "RESUBMITTED",
  "AWAITING_SECOND_APPROVAL",
  "CLOSED",
  "RETRIED",
  "FAILED",
  "REFUSED",
]);

/** A review step's expected outcome. */
type ReviewStepOutcome = z.infer<typeof ReviewStepOutcomeSchema>;

/** What a payment step may expect: the refund FAILED (its own review opens), or REFUSED (nothing to rehearse). */
const PAYMENT_STEP_OUTCOMES: readonly ReviewStepOutcome[] = ["FAILED", "REFUSED"];

/** A provider's decline reason, as `sim_decline_<reason>` names it (docs/payments.md#providers-payment_provider). */
const DeclineReasonSchema = z
  .string()
  .regex(/^[a-z0-9_]{1,64}$/, "a decline reason in lower case, digits and _ (as card_declined, expired_card)");

const ReviewStepSchema = z
  .object({
    id: IdSchema,
    label: z.string().min(1),
    /** A person decides the review of the claim of scenario `of`, as `POST /claims/{id}/review` does (docs/reviews.md). */
    review: z
      .object({
        of: IdSchema,
        decision: z.enum(["APPROVE", "DENY", "RESUBMIT", "RETRY", "CLOSE"]),
        amount_eur: z.number().optional(),
        note: z.string().optional(),
        reviewer: z.string().min(1).optional(),
        claim: ClaimSchema.optional(),
        /** A CLOSE of a failed refund's review: paid another way (it counts as refunded) or not (docs/payments.md). */
        paid_out_of_band: z.boolean().optional(),
      })
      .strict()
      .superRefine((r, ctx) => {
        if (r.decision === "CLOSE" && r.paid_out_of_band === undefined)
          ctx.addIssue({
            code: "custom",
            path: ["paid_out_of_band"],
            message:
              "a CLOSE says whether the refund was paid out of band (true: it counts as refunded) or not (false)",
          });
        if (r.decision !== "CLOSE" && r.paid_out_of_band !== undefined)
          ctx.addIssue({ code: "custom", path: ["paid_out_of_band"], message: "paid_out_of_band is only for CLOSE" });
      })
      .optional(),
    /**
     * The payment provider's answer to the refund scenario `of` executed, rehearsed with the simulated provider (a
     * batch run's refund is never paid, docs/payments.md): `declined` is the provider's reason.
     */
    payment: z.object({ of: IdSchema, declined: DeclineReasonSchema }).strict().optional(),
    /**
     * The deciding reviewer's own limit in EUR (docs/reviews.md#reviewer-limits), as their credential would carry it:
     * never part of the request's body.
     */
    reviewer_max_approval: z.number().positive().refine(Number.isFinite, "must be a finite number").optional(),
    expected: z.preprocess(
      (v) => (typeof v === "string" ? { outcome: v } : v),
      z
        .object({
          outcome: ReviewStepOutcomeSchema,
          reason_code: z.string().min(1).optional(),
          /** What the corrected claim of a RESUBMIT ends with, as a scenario's `expected`. */
          resubmitted: ExpectedSchema.optional(),
        })
        .strict(),
    ),
  })
  .strict()
  .superRefine((step, ctx) => {
    if ((step.review === undefined) === (step.payment === undefined))
      ctx.addIssue({
        code: "custom",
        path: [step.review === undefined ? "review" : "payment"],
        message:
          "a step of reviews: has one of review (a person decides) or payment (the provider's answer to a refund)",
      });
    if (step.payment === undefined) {
      if (step.expected.outcome === "FAILED")
        ctx.addIssue({
          code: "custom",
          path: ["expected"],
          message: "FAILED is a payment step's outcome: a review step expects the review's status",
        });
      return;
    }
    if (!PAYMENT_STEP_OUTCOMES.includes(step.expected.outcome))
      ctx.addIssue({
        code: "custom",
        path: ["expected"],
        message: `a payment step expects ${PAYMENT_STEP_OUTCOMES.join(" or ")}, not ${step.expected.outcome}`,
      });
    if (step.reviewer_max_approval !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["reviewer_max_approval"],
        message: "a payment step has no reviewer: reviewer_max_approval is for a review step",
      });
    if (step.expected.resubmitted !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["expected"],
        message: "resubmitted is what a RESUBMIT's corrected claim ends with: a payment step has none",
      });
  });

/**
 * Schema of `scenarios/scenarios.yaml` (docs/config.md), including DIR sample 35's rows (no `id`, `notes`), and the
 * review steps a person takes once every scenario has run (`reviews`, optional).
 */
const ScenarioFileSchema = z
  .object({
    scenarios: z.array(ScenarioRowSchema).min(1, "no scenarios"),
    reviews: z.array(ReviewStepSchema).optional(),
    /** Scenarios that run once the review steps have (a claim on an order a person decided, say). */
    after_reviews: z.array(ScenarioRowSchema).optional(),
  })
  .strict();

/** What a step of `reviews:` expects. */
interface ReviewStepExpected {
  outcome: ReviewStepOutcome;
  reason_code?: string;
  resubmitted?: { verdict: ExpectedOutcome; reason_code?: string };
}

/** A step of `reviews:`, run after every scenario in file order: a person's decision, or a provider's answer. */
export type ReviewStep = PersonReviewStep | PaymentStep;

/** A person's decision on the review of an earlier scenario's claim. */
interface PersonReviewStep {
  kind: "review";
  id: string;
  label: string;
  /** The scenario whose claim is under review. */
  of: string;
  /** The body of `POST /claims/{id}/review`. */
  body: Record<string, unknown>;
  /** Who decides, when the step gives the reviewer a limit of their own (`reviewer_max_approval`). */
  by?: ReviewerIdentity;
  expected: ReviewStepExpected;
}

/** The payment provider's decline of the refund an earlier scenario's claim executed, rehearsed (docs/payments.md). */
interface PaymentStep {
  kind: "payment";
  id: string;
  label: string;
  /** The scenario whose claim's refund the provider answers. */
  of: string;
  /** The provider's reason (`card_declined`): the simulated provider declines as for `sim_decline_<reason>`. */
  declined: string;
  expected: ReviewStepExpected;
}

/** One scenario, normalised. */
export interface Scenario {
  id: string;
  label: string;
  input: { claim: Claim } | { claim_text: string };
  expected: { verdict: ExpectedOutcome; reason_code?: string };
  /** The race this row belongs to: its rows are submitted at once and matched as a group, by count. */
  race?: string;
}

/** A scenario file as read: its scenarios, the ids taken from labels, and the keys accepted but ignored. */
export interface ScenarioFile {
  scenarios: Scenario[];
  /** Ids that came from a label (`SCENARIO A - …`) because the row has no `id`. */
  idsFromLabels: string[];
  ignored: IgnoredField[];
  /** The review steps, in file order (they run after every scenario). */
  reviews: ReviewStep[];
  /** Scenarios that run after the review steps (`after_reviews`), in file order. */
  afterReviews: Scenario[];
}

/** Parses and validates scenario YAML text. Throws `SourceFileError` naming file, row and field. */
export function parseScenarioFile(text: string, file: string): ScenarioFile {
  const source = parseYamlSource(text, file);
  const rows = (source.value as { scenarios?: { id?: unknown; label?: unknown }[] } | null)?.scenarios;
  const parsed = validateYaml(source, ScenarioFileSchema, (path) => {
    if (path[0] !== "scenarios" || typeof path[1] !== "number") return undefined;
    const row = Array.isArray(rows) ? rows[path[1]] : undefined;
    const id = typeof row?.id === "string" ? row.id : idFromLabel(row?.label);
    return id ?? `#${path[1] + 1}`;
  });
  const seen = new Map<string, number>();
  const idsFromLabels: string[] = [];
  const rowsOf = (section: "scenarios" | "after_reviews", list: typeof parsed.scenarios): Scenario[] => {
    const where = (i: number, id: string, field: string, message: string) =>
      new SourceFileError(file, [
        { file, line: source.lineOf([section, i, field]), row: id, field: `${section}[${i}].${field}`, message },
      ]);
    const races = new Map<string, number>();
    return list.map((row, i): Scenario => {
      const id = row.id ?? idFromLabel(row.label)!;
      if (row.id === undefined) idsFromLabels.push(id);
      const previous = seen.get(id);
      if (previous !== undefined) {
        const how = row.id === undefined ? " (taken from the label: add an id to tell them apart)" : "";
        throw where(i, id, row.id === undefined ? "label" : "id", `duplicate id (also row #${previous + 1})${how}`);
      }
      seen.set(id, i);
      if (row.race !== undefined) {
        const last = races.get(row.race);
        if (last !== undefined && last !== i - 1)
          throw where(i, id, "race", `race ${JSON.stringify(row.race)}: its rows must be next to each other`);
        races.set(row.race, i);
      }
      return {
        id,
        label: row.label,
        input: row.context.claim !== undefined ? { claim: row.context.claim } : { claim_text: row.context.claim_text! },
        expected:
          row.expected.reason_code === undefined
            ? { verdict: row.expected.verdict }
            : { verdict: row.expected.verdict, reason_code: row.expected.reason_code },
        ...(row.race !== undefined ? { race: row.race } : {}),
      };
    });
  };
  const scenarios = rowsOf("scenarios", parsed.scenarios);
  for (const group of new Set(scenarios.flatMap((r) => (r.race ? [r.race] : [])))) {
    const at = scenarios.findIndex((r) => r.race === group);
    if (scenarios.filter((r) => r.race === group).length < 2)
      throw new SourceFileError(file, [
        {
          file,
          line: source.lineOf(["scenarios", at, "race"]),
          row: scenarios[at]!.id,
          field: `scenarios[${at}].race`,
          message: `race ${JSON.stringify(group)} has one row: a race needs two or more`,
        },
      ]);
  }
  const reviews = (parsed.reviews ?? []).map((step, i): ReviewStep => {
    const where = (field: string, message: string) =>
      new SourceFileError(file, [
        { file, line: source.lineOf(["reviews", i, field]), row: step.id, field: `reviews[${i}].${field}`, message },
      ]);
    if (seen.has(step.id)) throw where("id", "duplicate id (a scenario has it)");
    const subject = step.payment ?? step.review!;
    if (!seen.has(subject.of) || seen.get(subject.of) === -1)
      throw where(
        step.payment ? "payment" : "review",
        `of: no scenario ${JSON.stringify(subject.of)} runs before this step (known: ${[...seen].flatMap(([k, v]) => (v === -1 ? [] : [k])).join(", ")})`,
      );
    seen.set(step.id, -1);
    if (step.payment)
      return {
        kind: "payment",
        id: step.id,
        label: step.label,
        of: step.payment.of,
        declined: step.payment.declined,
        expected: {
          outcome: step.expected.outcome,
          ...(step.expected.reason_code === undefined ? {} : { reason_code: step.expected.reason_code }),
        },
      };
    const { of, ...body } = step.review!;
    const maxApprovalEur = step.reviewer_max_approval;
    if (maxApprovalEur !== undefined && Math.round(maxApprovalEur * 100) !== maxApprovalEur * 100)
      throw where("reviewer_max_approval", "must be whole cents");
    return {
      kind: "review",
      id: step.id,
      label: step.label,
      of,
      body,
      ...(maxApprovalEur === undefined ? {} : { by: { id: body.reviewer ?? "reviewer", maxApprovalEur } }),
      expected: {
        outcome: step.expected.outcome,
        ...(step.expected.reason_code === undefined ? {} : { reason_code: step.expected.reason_code }),
        ...(step.expected.resubmitted === undefined
          ? {}
          : {
              resubmitted: {
                verdict: step.expected.resubmitted.verdict,
                ...(step.expected.resubmitted.reason_code === undefined
                  ? {}
                  : { reason_code: step.expected.resubmitted.reason_code }),
              },
            }),
      },
    };
  });
  const afterReviews = rowsOf("after_reviews", parsed.after_reviews ?? []);
  return {
    scenarios,
    idsFromLabels,
    ignored: ignoredFields(ScenarioFileSchema, source.value),
    reviews,
    afterReviews,
  };
}

/** Parses and validates scenario YAML text. Throws `SourceFileError` naming file, row and field. */
export function parseScenarios(text: string, file: string): Scenario[] {
  return parseScenarioFile(text, file).scenarios;
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** Replaces `{{date:-3d}}` in claim text with a prose date relative to the run's clock. */
export function renderClaimText(text: string, nowMs: number): string {
  return text.replace(/\{\{date:([+-]\d+)([dh])\}\}/g, (_m, n: string, unit: string) => {
    const d = new Date(nowMs + Number(n) * (unit === "d" ? 86_400_000 : 3_600_000));
    return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  });
}

/** The submission body of a scenario. */
export function scenarioBody(s: Scenario, simulationId: string, nowMs: number): Record<string, unknown> {
  const input =
    "claim" in s.input ? { claim: s.input.claim } : { claim_text: renderClaimText(s.input.claim_text, nowMs) };
  return { ...input, simulation_id: simulationId, label: `${s.id} — ${s.label}` };
}

/** A run id that sorts by time: `<run_id>_<YYYYMMDDTHHMMSSZ>`. */
export function simulationIdFor(runId: string, nowMs: number): string {
  return `${runId}_${new Date(nowMs)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")}`;
}

/** The claim id and Idempotency-Key of a scenario in a run (the same as `claims batch` uses), so a re-run submission is a replay. */
export function scenarioKeys(
  simulationId: string,
  scenarioId: string,
  body: unknown,
): { claimId: string; idempotencyKey: string } {
  return {
    claimId: `clm_${hashHex(`${simulationId}:${scenarioId}`).slice(0, 20)}`,
    idempotencyKey: `${simulationId}:${scenarioId}:${hashHex(canonicalize(body)).slice(0, 16)}`,
  };
}
