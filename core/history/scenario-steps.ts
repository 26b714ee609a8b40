// The steps of a scenario file's `reviews:` list (docs/config.md), run in file order once every scenario has run: a
// person's decision on a review, the payment provider's answer to a refund, a return event a shop or warehouse posts,
// and the sweep's pass over the returns that are due (docs/returns.md). The steps run on a clock that only moves
// forward: a step's `at` (an offset from the run's clock, `+31d`) moves it; a step without one runs at the instant of
// the step before.
import * as z from "zod";
import { ClaimSchema } from "../claim/claim.ts";
import { resolveDate } from "../claim/relative-date.ts";
import type { SourceFileError } from "../claim/errors.ts";
import type { ReviewerIdentity } from "../kernel/review.ts";
import { ReturnEventBodySchema, ReturnEventKindSchema } from "../kernel/returns.ts";
import type { ReturnEventKind } from "../kernel/returns.ts";
import type { ExpectedOutcome } from "./expected-outcome.ts";
import { ExpectedSchema } from "./scenario-expected.ts";

/** A scenario's or a step's id. */
export const IdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, "ids hold letters, digits, _ and -");

/**
 * What a step may expect: a person's step the review's status after the decision (CLOSED / RETRIED for a failed
 * refund's review), AWAITING_SECOND_APPROVAL for a first approval under four eyes, or REFUSED with the API's code; a
 * payment step the settlement's status after the provider's rehearsed answer (FAILED); a return event the decision
 * `POST /claims/{id}/return-events` answers (WAIT, PAY, REVIEW, RECORDED); a sweep what it did to the claim
 * (NOT_RECEIVED, PAY, REVIEW, or WAIT for nothing).
 */
const StepOutcomeSchema = z.enum([
  "APPROVED",
  "DENIED",
  "RESUBMITTED",
  "AWAITING_SECOND_APPROVAL",
  "CLOSED",
  "RETRIED",
  "FAILED",
  "REFUSED",
  "WAIT",
  "PAY",
  "REVIEW",
  "RECORDED",
  "NOT_RECEIVED",
]);

/** A step's expected outcome. */
type StepOutcome = z.infer<typeof StepOutcomeSchema>;

/** The kinds of step, and the outcomes each may expect. */
const OUTCOMES_OF = {
  review: ["APPROVED", "DENIED", "RESUBMITTED", "AWAITING_SECOND_APPROVAL", "CLOSED", "RETRIED", "REFUSED"],
  payment: ["FAILED", "REFUSED"],
  return_event: ["WAIT", "PAY", "REVIEW", "RECORDED", "REFUSED"],
  sweep: ["NOT_RECEIVED", "PAY", "REVIEW", "WAIT"],
} as const satisfies Record<string, readonly StepOutcome[]>;

type StepKind = keyof typeof OUTCOMES_OF;

/** A provider's decline reason, as `sim_decline_<reason>` names it (docs/payments.md#providers-payment_provider). */
const DeclineReasonSchema = z
  .string()
  .regex(/^[a-z0-9_]{1,64}$/, "a decline reason in lower case, digits and _ (as card_declined, expired_card)");

/** An offset from the run's clock that moves the steps' clock forward (`+3d`, `+36h`, `+90m`). */
const StepAtSchema = z
  .string()
  .regex(/^\+\d+(?:\.\d+)?[dhm]$/, "at is an offset from the run's clock such as +3d, +36h or +90m (never back)");

const ReviewSchema = z
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
        message: "a CLOSE says whether the refund was paid out of band (true: it counts as refunded) or not (false)",
      });
    if (r.decision !== "CLOSE" && r.paid_out_of_band !== undefined)
      ctx.addIssue({ code: "custom", path: ["paid_out_of_band"], message: "paid_out_of_band is only for CLOSE" });
  });

export const ReviewStepSchema = z
  .object({
    id: IdSchema,
    label: z.string().min(1),
    /** A person decides the review of the claim of scenario `of`, as `POST /claims/{id}/review` does (docs/reviews.md). */
    review: ReviewSchema.optional(),
    /**
     * The payment provider's answer to the refund scenario `of` executed, rehearsed with the simulated provider (a
     * batch run's refund is never paid, docs/payments.md): `declined` is the provider's reason.
     */
    payment: z.object({ of: IdSchema, declined: DeclineReasonSchema }).strict().optional(),
    /**
     * A return event for the claim of scenario `of`, as a shop or warehouse posts it (`POST /claims/{id}/return-events`,
     * docs/returns.md); its `at` is the step's instant, its `event_id` the step's id unless given (a repeat names one).
     */
    return_event: z
      .object({
        of: IdSchema,
        event: ReturnEventKindSchema,
        event_id: ReturnEventBodySchema.shape.event_id.optional(),
        carrier_ref: ReturnEventBodySchema.shape.carrier_ref,
      })
      .strict()
      .optional(),
    /** The sweep's pass over the returns that are due, at the step's instant; the row says what it did to `of`'s claim. */
    sweep: z.object({ of: IdSchema }).strict().optional(),
    /** Moves the steps' clock forward to the run's clock plus this offset before the step runs. */
    at: StepAtSchema.optional(),
    /**
     * The deciding reviewer's own limit in EUR (docs/reviews.md#reviewer-limits), as their credential would carry it:
     * never part of the request's body.
     */
    reviewer_max_approval: z.number().positive().refine(Number.isFinite, "must be a finite number").optional(),
    expected: z.preprocess(
      (v) => (typeof v === "string" ? { outcome: v } : v),
      z
        .object({
          outcome: StepOutcomeSchema,
          reason_code: z.string().min(1).optional(),
          /** What the corrected claim of a RESUBMIT ends with, as a scenario's `expected`. */
          resubmitted: ExpectedSchema.optional(),
        })
        .strict(),
    ),
  })
  .strict()
  .superRefine((step, ctx) => {
    const kinds = (Object.keys(OUTCOMES_OF) as StepKind[]).filter((k) => step[k] !== undefined);
    if (kinds.length !== 1) {
      ctx.addIssue({
        code: "custom",
        path: [kinds[1] ?? "review"],
        message:
          "a step of reviews: has one of review (a person decides), payment (the provider's answer to a refund), return_event (a shop posts a return event) or sweep (the deadlines of returns)",
      });
      return;
    }
    const kind = kinds[0]!;
    const allowed: readonly StepOutcome[] = OUTCOMES_OF[kind];
    if (!allowed.includes(step.expected.outcome))
      ctx.addIssue({
        code: "custom",
        path: ["expected"],
        message:
          kind === "review" && step.expected.outcome === "FAILED"
            ? "FAILED is a payment step's outcome: a review step expects the review's status"
            : `a ${kind} step expects ${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}, not ${step.expected.outcome}`,
      });
    if (kind !== "review" && step.reviewer_max_approval !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["reviewer_max_approval"],
        message: `a ${kind} step has no reviewer: reviewer_max_approval is for a review step`,
      });
    if (kind !== "review" && step.expected.resubmitted !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["expected"],
        message: `resubmitted is what a RESUBMIT's corrected claim ends with: a ${kind} step has none`,
      });
  });

/** A parsed step, as the schema gives it. */
type ParsedStep = z.infer<typeof ReviewStepSchema>;

/** What a step of `reviews:` expects. */
interface ReviewStepExpected {
  outcome: StepOutcome;
  reason_code?: string;
  resubmitted?: { verdict: ExpectedOutcome; reason_code?: string };
}

/** What every step has: its id, label, the scenario it acts on, the instant it runs at, what it expects. */
interface StepBase {
  id: string;
  label: string;
  /** The scenario whose claim the step acts on. */
  of: string;
  /** How long after the run's clock the step runs (ms): 0, or moved forward by the steps' `at`. */
  offsetMs: number;
  expected: ReviewStepExpected;
}

/** A step of `reviews:`, run after every scenario in file order. */
export type ReviewStep = PersonReviewStep | PaymentStep | ReturnEventStep | SweepStep;

/** A person's decision on the review of an earlier scenario's claim. */
interface PersonReviewStep extends StepBase {
  kind: "review";
  /** The body of `POST /claims/{id}/review`. */
  body: Record<string, unknown>;
  /** Who decides, when the step gives the reviewer a limit of their own (`reviewer_max_approval`). */
  by?: ReviewerIdentity;
}

/** The payment provider's decline of the refund an earlier scenario's claim executed, rehearsed (docs/payments.md). */
interface PaymentStep extends StepBase {
  kind: "payment";
  /** The provider's reason (`card_declined`): the simulated provider declines as for `sim_decline_<reason>`. */
  declined: string;
}

/** A return event posted for an earlier scenario's claim (docs/returns.md). */
interface ReturnEventStep extends StepBase {
  kind: "return_event";
  /** The body of `POST /claims/{id}/return-events` but its `at`, which is the step's instant. */
  body: { event_id: string; event: ReturnEventKind; carrier_ref?: string };
}

/** The sweep's pass over the returns that are due, at the step's instant. */
interface SweepStep extends StepBase {
  kind: "sweep";
}

/** Where a step's problem is: throws a `SourceFileError` naming the step's field. */
type StepProblem = (field: string, message: string) => SourceFileError;

/**
 * A parsed step, normalised: `known` are the ids that run before it (the scenarios), `previousOffsetMs` how long after
 * the run's clock the step before it runs (0 for the first).
 */
export function normaliseStep(
  step: ParsedStep,
  known: readonly string[],
  previousOffsetMs: number,
  where: StepProblem,
): ReviewStep {
  const kind = (["review", "payment", "return_event", "sweep"] as const).find((k) => step[k] !== undefined)!;
  const of = step[kind]!.of;
  if (!known.includes(of))
    throw where(kind, `of: no scenario ${JSON.stringify(of)} runs before this step (known: ${known.join(", ")})`);
  let offsetMs = previousOffsetMs;
  if (step.at !== undefined) {
    offsetMs = Date.parse(resolveDate(step.at, 0)!);
    if (offsetMs < previousOffsetMs)
      throw where(
        "at",
        `at ${step.at} is before the step before it (${previousOffsetMs / 3_600_000} h after the run's clock): the steps' clock only moves forward`,
      );
  }
  const expected: ReviewStepExpected = {
    outcome: step.expected.outcome,
    ...(step.expected.reason_code === undefined ? {} : { reason_code: step.expected.reason_code }),
  };
  const base = { id: step.id, label: step.label, of, offsetMs, expected };
  if (step.payment) return { ...base, kind: "payment", declined: step.payment.declined };
  if (step.sweep) return { ...base, kind: "sweep" };
  if (step.return_event) {
    const r = step.return_event;
    return {
      ...base,
      kind: "return_event",
      body: {
        event_id: r.event_id ?? step.id,
        event: r.event,
        ...(r.carrier_ref === undefined ? {} : { carrier_ref: r.carrier_ref }),
      },
    };
  }
  const { of: _of, ...body } = step.review!;
  const maxApprovalEur = step.reviewer_max_approval;
  if (maxApprovalEur !== undefined && Math.round(maxApprovalEur * 100) !== maxApprovalEur * 100)
    throw where("reviewer_max_approval", "must be whole cents");
  const resubmitted = step.expected.resubmitted;
  return {
    ...base,
    kind: "review",
    body,
    ...(maxApprovalEur === undefined ? {} : { by: { id: body.reviewer ?? "reviewer", maxApprovalEur } }),
    expected: {
      ...expected,
      ...(resubmitted === undefined
        ? {}
        : {
            resubmitted: {
              verdict: resubmitted.verdict,
              ...(resubmitted.reason_code === undefined ? {} : { reason_code: resubmitted.reason_code }),
            },
          }),
    },
  };
}
