// The OpenAPI 3.1 description of the HTTP API (docs/http-api.md), generated from app/manifest.ts ROUTES and the zod
// schemas the handlers parse with (z.toJSONSchema, JSON Schema 2020-12 as OpenAPI 3.1 uses). Every route of
// ROUTES must have its entry in ROUTE_DOCS: `openApiDocument()` refuses a route without one, so a new route
// cannot ship undescribed (functions/openapi.test.ts). The document is checked in as functions/openapi.json
// (`npm run openapi` writes it; a test fails when it drifts) and GET /openapi.json serves that file.
import * as z from "zod";
import { ClaimStatusSchema, VerdictValueSchema } from "../../core/kernel/claim-record.ts";
import { ClaimSchema } from "../../core/claim/claim.ts";
import { ClaimExtractionOutputSchema, RefundProposalOutputSchema } from "../../core/claim/proposal-output.ts";
import {
  ReviewApprovalSchema,
  ReviewAwaitingSchema,
  ReviewDecisionKindSchema,
  ReviewDecisionSchema,
  ReviewOriginSchema,
  ReviewStatusSchema,
} from "../../core/kernel/review.ts";
import { ROUTES } from "../../app/manifest.ts";
import type { RouteAuth, RouteKey } from "../../app/manifest.ts";
import { SubmissionSchema } from "../../pipeline/decide/intake.ts";
import { RefundReviewRequestSchema } from "../../pipeline/decide/refund-failed.ts";
import { MAX_BODY_BYTES } from "./http.ts";
import { CLAIM_ID, IDEMPOTENCY_KEY, LIST_CURSOR, SERVED_REPORT_LIMITS, SIMULATION_ID } from "./intake-routes.ts";
import { OpenApiError } from "./errors.ts";

/** One response of a route. */
interface ResponseDoc {
  readonly description: string;
  readonly schema?: z.ZodType;
  /** application/json unless said. */
  readonly contentType?: "application/json" | "text/html";
  readonly headers?: Readonly<Record<string, { description: string; schema: z.ZodType }>>;
}

/** How one route is described: what it is for, what it takes and what it answers (errors common to all routes are added). */
interface RouteDoc {
  readonly summary: string;
  readonly description: string;
  readonly tag: "claims" | "reviews" | "operations";
  readonly pathParams?: Readonly<Record<string, { description: string; schema: z.ZodType }>>;
  readonly query?: Readonly<Record<string, { description: string; schema: z.ZodType }>>;
  readonly headers?: Readonly<Record<string, { description: string; schema: z.ZodType }>>;
  readonly body?: { readonly description: string; readonly schema: z.ZodType };
  readonly responses: Readonly<Record<number, ResponseDoc>>;
}

const pattern = (re: RegExp) => z.string().regex(re);
const ClaimIdParam = { description: "The claim's id (`clm_…`, as POST /claims answered).", schema: pattern(CLAIM_ID) };

/** `4xx`/`5xx` bodies (docs/http-api.md). */
export const ApiErrorSchema = z.object({
  error: z.object({
    code: z
      .string()
      .describe("A stable code, e.g. INVALID_INPUT, NOT_FOUND, IDEMPOTENCY_CONFLICT, REVIEW_ALREADY_DECIDED."),
    message: z.string(),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe("What is wrong with the input, field by field (400)."),
  }),
});

/** A review as GET /claims/{id} shows it (core/kernel/review.ts `reviewView`). */
const ReviewViewSchema = z
  .object({
    review_id: z.string(),
    origin: ReviewOriginSchema,
    status: ReviewStatusSchema,
    reason_code: z.string(),
    reason: z.string(),
    requested_at: z.string(),
    due_at: z
      .string()
      .optional()
      .describe("When the review is due: requested_at + the policy's review_due_days / review_due_hours."),
    taken_by: z
      .string()
      .optional()
      .describe("The reviewer who took the review at the desk (POST …/review/take), while the lease lasts."),
    taken_until: z
      .string()
      .optional()
      .describe("When that lease runs out (another reviewer's decision is 409 TAKEN_BY until then)."),
    decided_at: z.string().optional(),
    decision: ReviewDecisionKindSchema.optional(),
    reviewer: z.string().optional(),
    note: z.string().optional(),
    amount_eur: z.number().optional().describe("The amount under review; once APPROVED, the amount approved."),
    resubmitted_claim_id: z.string().optional(),
    approvals: z.array(ReviewApprovalSchema).describe("The approvals given, first to last (two under four eyes)."),
    awaiting: ReviewAwaitingSchema.optional().describe(
      "A PENDING review with a first approval awaits a different reviewer's.",
    ),
  })
  .strict();

/** A failed refund's own review (origin REFUND_FAILED), decided with RETRY or CLOSE. */
const RefundReviewViewSchema = z
  .object({
    review_id: z.string(),
    origin: z.literal("REFUND_FAILED"),
    status: z.enum(["PENDING", "RETRIED", "CLOSED"]),
    reason_code: z.literal("REFUND_FAILED"),
    reason: z.string(),
    requested_at: z.string(),
    due_at: z
      .string()
      .optional()
      .describe("When the review is due: requested_at + the policy's review_due_days / review_due_hours."),
    taken_by: z
      .string()
      .optional()
      .describe("The reviewer who took the review at the desk (POST …/review/take), while the lease lasts."),
    taken_until: z
      .string()
      .optional()
      .describe("When that lease runs out (another reviewer's decision is 409 TAKEN_BY until then)."),
    decided_at: z.string().optional(),
    decision: z.enum(["RETRY", "CLOSE"]).optional(),
    reviewer: z.string().optional(),
    note: z.string().optional(),
    retry_execution_id: z.string().optional().describe("RETRY: the new execution that pays again."),
    paid_out_of_band: z
      .boolean()
      .optional()
      .describe("CLOSE: paid another way (counted as refunded) or not (the reservation released)."),
  })
  .strict();

/** The public view of a claim (core/kernel/claim-record.ts `claimView`). */
const ClaimViewSchema = z
  .object({
    claim_id: z.string(),
    status: ClaimStatusSchema,
    verdict: VerdictValueSchema.optional().describe("Once DECIDED."),
    reason_code: z.string().optional(),
    reason: z.string().optional(),
    extracted: ClaimExtractionOutputSchema.optional().describe("What the LLM read from claim_text (free-text claims)."),
    proposal: RefundProposalOutputSchema.optional().describe(
      "The crew's proposal: a claim, not a fact; the verdict is the kernel's.",
    ),
    executed: z.boolean().optional().describe("Whether a refund was reserved (RefundExecuted announced it)."),
    dfid: z.string().describe("The decision-flow id every audit event of the claim carries."),
    simulation_id: z.string().optional(),
    parent_claim_id: z.string().optional().describe("The claim a reviewer's RESUBMIT corrected."),
    review: ReviewViewSchema.optional(),
    refund: z
      .object({
        status: z.enum(["PENDING", "SETTLED", "FAILED"]),
        provider_ref: z.string().optional().describe("The payment provider's refund id (Stripe re_…)."),
        failure_reason: z.string().optional().describe("Why the provider refused it."),
        review: RefundReviewViewSchema.optional().describe("A failed refund's own review."),
      })
      .strict()
      .optional()
      .describe(
        "The refund's settlement with the payment provider, once the refund executor took it (docs/payments.md).",
      ),
    customer_message: z
      .string()
      .optional()
      .describe("What the customer may be told, once the claim is final: the rule, never order facts."),
  })
  .strict();

/** The body of POST /claims/{id}/review: a claim review's decision, or a failed refund review's RETRY / CLOSE. */
const ReviewRequestSchema = z
  .object({
    ...ReviewDecisionSchema.shape,
    decision: z
      .enum([...ReviewDecisionKindSchema.options, ...RefundReviewRequestSchema.shape.decision.options])
      .describe("RETRY / CLOSE (CLOSE with a note) decide a failed refund's review (origin REFUND_FAILED) only."),
    review_id: RefundReviewRequestSchema.shape.review_id.describe(
      "RETRY / CLOSE: the review decided (GET /reviews review_id); a decision meant for an earlier one is 409.",
    ),
    paid_out_of_band: RefundReviewRequestSchema.shape.paid_out_of_band.describe(
      "CLOSE (required): true when the refund was paid another way (the reservation kept: refunded), false when not (released).",
    ),
  })
  .strict();

/** One item of GET /reviews (core/kernel/review.ts `reviewListItem`). */
const ReviewListItemSchema = z
  .object({
    review_id: z.string(),
    claim_id: z.string(),
    dfid: z.string(),
    origin: z
      .union([ReviewOriginSchema, z.literal("REFUND_FAILED")])
      .describe("REFUND_FAILED: a failed refund's own review, decided with RETRY or CLOSE."),
    status: ReviewStatusSchema,
    reason_code: z.string(),
    reason: z.string(),
    order_id: z.string().optional(),
    amount_eur: z.number().optional(),
    requested_at: z.string(),
    due_at: z
      .string()
      .optional()
      .describe("When the review is due: requested_at + the policy's review_due_days / review_due_hours."),
    taken_by: z
      .string()
      .optional()
      .describe("The reviewer who took the review at the desk (POST …/review/take), while the lease lasts."),
    taken_until: z
      .string()
      .optional()
      .describe("When that lease runs out (another reviewer's decision is 409 TAKEN_BY until then)."),
    simulation_id: z.string().optional(),
    execution_id: z.string().optional().describe("REFUND_FAILED: the execution the provider refused."),
    provider: z.string().optional().describe("REFUND_FAILED: the payment provider."),
    provider_ref: z
      .string()
      .optional()
      .describe("REFUND_FAILED: the provider's reference for the refund, when it gave one."),
    failure_reason: z.string().optional().describe("REFUND_FAILED: why the provider refused it."),
    retry: z
      .object({ possible: z.boolean(), reason: z.string().optional() })
      .strict()
      .optional()
      .describe("REFUND_FAILED: whether a RETRY can succeed with the order as the shop has it now, and why not."),
    verdict_id: z.string().optional().describe("The kernel's verdict that escalated (ESCALATE reviews)."),
    label: z.string().optional(),
    claim: ClaimSchema.optional().describe("The structured claim (as submitted, or as extracted from free text)."),
    claim_text: z.string().optional().describe("The customer's own words, for a free-text claim."),
    proposal: z.unknown().optional().describe("The Decision Maker's proposal the kernel judged."),
    verdict: VerdictValueSchema.optional(),
    layer: z.number().int().optional().describe("The kernel layer that decided."),
    checks: z.array(z.unknown()).optional().describe("The kernel's checks up to that layer."),
    decision: ReviewDecisionKindSchema.optional(),
    decided_at: z.string().optional(),
    reviewer: z.string().optional(),
    note: z.string().optional(),
    approved_amount_eur: z.number().optional(),
    resubmitted_claim_id: z.string().optional(),
    approvals: z.array(ReviewApprovalSchema).describe("The approvals given, first to last (two under four eyes)."),
    awaiting: ReviewAwaitingSchema.optional().describe(
      "A PENDING review with a first approval awaits a different reviewer's.",
    ),
    order: z
      .object({
        order_id: z.string(),
        amount_eur: z.number(),
        currency: z.string(),
        purchase_date: z.string(),
        category: z.string(),
        customer_id: z.string().optional(),
      })
      .strict()
      .nullable()
      .optional()
      .describe(
        "The order as the shop's data says (absent when the review names none; null when it could not be read: order_unread says why).",
      ),
    order_unread: z
      .object({
        code: z.enum(["ORDER_SOURCE_UNAVAILABLE", "ORDER_DATA_INVALID", "ORDER_NOT_FOUND", "ORDER_NOT_READ"]),
        reason: z.string(),
      })
      .strict()
      .optional()
      .describe("Why `order` is null: the listing never fails for one order the shop cannot serve."),
    refunded: z
      .object({ automatic_eur: z.number(), approved_eur: z.number() })
      .strict()
      .describe("What was refunded on the order so far: by the kernel's ACCEPTs, and by people's approvals."),
    other_claims: z
      .array(
        z
          .object({
            claim_id: z.string(),
            status: z.string(),
            verdict: z.string().optional(),
            reason_code: z.string().optional(),
            amount_eur: z.number(),
          })
          .strict(),
      )
      .describe("The other claims on the order the ledger knows (refunded or under review), with their outcomes."),
    customer_window: z
      .object({ refunds: z.number().int(), refunded_eur: z.number() })
      .strict()
      .optional()
      .describe("The customer's automatic refunds in the customer-limit window, when limits are configured."),
  })
  .strict();

/** The answer of POST /claims/{id}/review (pipeline/review.ts). */
const ReviewResultSchema = z
  .object({
    claim_id: z.string(),
    review: z.union([ReviewViewSchema, RefundReviewViewSchema]),
    executed: z.boolean(),
    execution_id: z
      .string()
      .optional()
      .describe("The refund's execution id (APPROVE, RETRY: RefundExecuted carries it; CLOSE: the execution closed)."),
    resubmitted_claim_id: z.string().optional().describe("The corrected claim (RESUBMIT)."),
  })
  .strict();

const NotFound = { description: "No such claim (or report).", schema: ApiErrorSchema };

/** Every route of ROUTES, described. */
export const ROUTE_DOCS: Partial<Record<RouteKey, RouteDoc>> = {
  "POST /claims": {
    tag: "claims",
    summary: "Submit a claim",
    description:
      "Stores the claim and answers at once; the crew and the kernel decide it asynchronously (poll GET /claims/{id} or consume the bus events). " +
      "Give exactly one of `claim` (structured) or `claim_text` (free text, extracted by one LLM call). Invalid input stores nothing. " +
      "A zero or negative amount is accepted here and rejected by the kernel (INVALID_AMOUNT).",
    headers: {
      "Idempotency-Key": {
        description: "Same key and same body: the same claim_id again; same key, another body: 409.",
        schema: pattern(IDEMPOTENCY_KEY),
      },
    },
    body: { description: `The claim (at most ${MAX_BODY_BYTES} bytes).`, schema: SubmissionSchema },
    responses: {
      202: {
        description: "Stored; the claim is on its way.",
        schema: z.object({ claim_id: z.string(), status: ClaimStatusSchema }),
        headers: { Location: { description: "/claims/{claim_id}", schema: z.string() } },
      },
      409: {
        description: "IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another body.",
        schema: ApiErrorSchema,
      },
      413: { description: `PAYLOAD_TOO_LARGE: the body is over ${MAX_BODY_BYTES} bytes.`, schema: ApiErrorSchema },
      429: {
        description:
          "OVERLOADED (local stack only): more claims are open than `claims serve --max-open` allows; nothing was stored. Send it again after Retry-After.",
        schema: ApiErrorSchema,
        headers: { "Retry-After": { description: "Seconds to wait before trying again.", schema: z.string() } },
      },
    },
  },
  "GET /claims": {
    tag: "claims",
    summary: "List claims",
    description:
      "Claim views, newest receipt first, a page at a time; each filter is optional. A bad parameter is a 400 naming it.",
    query: {
      status: {
        description: "RECEIVED, RUNNING, DECIDED or NEEDS_REVIEW (several comma-separated).",
        schema: z.string(),
      },
      verdict: { description: "ACCEPT, ESCALATE or REJECT.", schema: VerdictValueSchema },
      since: { description: "Received at or after this instant (ISO 8601).", schema: z.string() },
      limit: { description: "Page size, 1–200 (default 50).", schema: z.number().int().min(1).max(200).default(50) },
      cursor: { description: "The next_cursor of the previous page.", schema: pattern(LIST_CURSOR) },
    },
    responses: {
      200: {
        description: "A page of claims.",
        schema: z.object({ items: z.array(ClaimViewSchema), next_cursor: z.string().optional() }),
      },
      400: { description: "INVALID_QUERY: the message and the issue name the parameter.", schema: ApiErrorSchema },
    },
  },
  "GET /claims/{id}": {
    tag: "claims",
    summary: "Read a claim",
    description:
      "The claim's status (RECEIVED → RUNNING → DECIDED | NEEDS_REVIEW), its verdict and reason once decided, its review once one exists.",
    pathParams: { id: ClaimIdParam },
    responses: { 200: { description: "The claim.", schema: ClaimViewSchema }, 404: NotFound },
  },
  "GET /reports/{simulation_id}": {
    tag: "claims",
    summary: "The HTML audit report of a simulation",
    description:
      "A self-contained HTML page built from the audit: for a batch run, every claim's decision cycle with expected against actual; " +
      "for claims sent to the API with this `simulation_id`, the served view of them." +
      " Without an Authorization header, a request whose Accept prefers text/html gets 200 and a page that asks for the intake token, keeps it for the tab and shows the report (nothing of a claim in it).",
    pathParams: {
      simulation_id: {
        description: "The run's simulation id (the batch's `simulation_id`).",
        schema: pattern(SIMULATION_ID),
      },
    },
    responses: {
      200: { description: "The report.", contentType: "text/html", schema: z.string() },
      404: { description: "No audit recorded for this simulation.", schema: ApiErrorSchema },
    },
  },
  "GET /reports": {
    tag: "claims",
    summary: "The live view of recent claims",
    description:
      "A self-contained HTML page of the most recent claims sent without a simulation_id, newest first, each with its decision cycle (200 also when there are none)." +
      " Without an Authorization header, a request whose Accept prefers text/html gets 200 and a page that asks for the intake token, keeps it for the tab and shows the report (nothing of a claim in it).",
    query: {
      limit: {
        description: `How many claims, 1–${SERVED_REPORT_LIMITS.max} (default ${SERVED_REPORT_LIMITS.default}).`,
        schema: z.number().int().min(1).max(SERVED_REPORT_LIMITS.max).default(SERVED_REPORT_LIMITS.default),
      },
    },
    responses: { 200: { description: "The page.", contentType: "text/html", schema: z.string() } },
  },
  "GET /review": {
    tag: "reviews",
    summary: "The reviewers' page",
    description:
      "A self-contained HTML page for reviewers: pending reviews with the claim and the kernel's checks; approve, deny or resubmit. It holds no secret: it asks for the reviewer token and calls GET /reviews and POST /claims/{id}/review with it.",
    responses: { 200: { description: "The page.", contentType: "text/html", schema: z.string() } },
  },
  "GET /reviews": {
    tag: "reviews",
    summary: "List reviews",
    description:
      "Reviews with a status (PENDING by default), a page at a time (pages cut oldest request first), each page ordered by due_at, then the larger amount. Reviewer token.",
    query: {
      status: {
        description: "PENDING (default), APPROVED, DENIED or RESUBMITTED.",
        schema: ReviewStatusSchema.default("PENDING"),
      },
      limit: { description: "Page size, 1–200 (default 50).", schema: z.number().int().min(1).max(200).default(50) },
      cursor: { description: "The next_cursor of the previous page.", schema: pattern(LIST_CURSOR) },
    },
    responses: {
      200: {
        description: "A page of reviews.",
        schema: z.object({
          reviewer: z
            .object({ id: z.string(), name: z.string().optional(), max_approval_eur: z.number().optional() })
            .strict()
            .describe("Who is asking: the credential's reviewer and their approval limit (absent: none of their own)."),
          items: z.array(ReviewListItemSchema),
          next_cursor: z.string().optional(),
        }),
      },
    },
  },
  "POST /claims/{id}/review": {
    tag: "reviews",
    summary: "Decide a claim's review",
    description:
      "APPROVE (ESCALATE reviews; optionally a lower amount_eur) re-runs the reject checks against the current ledger and reserves the refund once; " +
      "DENY (any review) closes the claim without a refund; RESUBMIT (NEEDS_REVIEW reviews) submits the corrected `claim` as a new claim. " +
      "RETRY / CLOSE decide a failed refund's review (origin REFUND_FAILED) only: RETRY pays again under a new execution_id, " +
      "CLOSE (with a note and paid_out_of_band) keeps the refund's reservation when it was paid out of band (counted as refunded) or releases it (not refunded); either way it binds the order like a DENY. " +
      "Repeating a decision returns the stored result. Reviewer token.",
    pathParams: { id: ClaimIdParam },
    body: { description: "The decision.", schema: ReviewRequestSchema },
    responses: {
      200: { description: "The decided review.", schema: ReviewResultSchema },
      404: NotFound,
      409: {
        description:
          "REVIEW_ALREADY_DECIDED (another decision was taken), NO_PENDING_REVIEW, DECISION_NOT_ALLOWED, TAKEN_BY (another reviewer holds the review), or the reject rule that now fails (e.g. EXCEEDS_REFUNDABLE_BALANCE).",
        schema: ApiErrorSchema,
      },
      413: { description: `PAYLOAD_TOO_LARGE: the body is over ${MAX_BODY_BYTES} bytes.`, schema: ApiErrorSchema },
      503: {
        description:
          "ORDER_SOURCE_UNAVAILABLE: an APPROVE could not read the order from the shop's order API to check it; nothing changed, try again.",
        schema: ApiErrorSchema,
      },
    },
  },
  "POST /claims/{id}/review/take": {
    tag: "reviews",
    summary: "Take a review",
    description:
      "The desk: the claim's pending review (its failed refund's, when it has one) is the caller's for 15 minutes — taking it again renews it; deciding it ends it. Meanwhile another reviewer's take or decision is 409 TAKEN_BY. Reviewer token.",
    pathParams: { id: ClaimIdParam },
    body: { description: "Nothing (no body, or {}).", schema: z.object({}).strict() },
    responses: {
      200: {
        description: "Taken.",
        schema: z
          .object({ claim_id: z.string(), review_id: z.string(), taken_by: z.string(), taken_until: z.string() })
          .strict(),
      },
      400: { description: "INVALID_CLAIM_ID, or a body other than {}.", schema: ApiErrorSchema },
      404: NotFound,
      409: {
        description:
          "TAKEN_BY (another reviewer holds it until taken_until), NO_PENDING_REVIEW, REVIEW_ALREADY_DECIDED.",
        schema: ApiErrorSchema,
      },
    },
  },
  "GET /health": {
    tag: "operations",
    summary: "Health check",
    description:
      "Answers without a token and without touching any dependency. `claims serve` says degraded while the configured model (`llm`) or the shop's order API (`orders`) does not answer.",
    responses: {
      200: {
        description: "Up.",
        schema: z.union([
          z.object({ status: z.literal("ok") }),
          z.object({
            status: z.literal("degraded"),
            llm: z.literal("unreachable").optional(),
            orders: z.literal("unreachable").optional(),
          }),
        ]),
      },
    },
  },
  "GET /openapi.json": {
    tag: "operations",
    summary: "This description",
    description: "The OpenAPI 3.1 description of every route, generated from the schemas the handlers parse with.",
    responses: {
      200: { description: "The OpenAPI document.", schema: z.object({ openapi: z.literal("3.1.0") }).loose() },
    },
  },
  "POST /webhooks/stripe": {
    tag: "operations",
    summary: "Stripe's refund webhooks",
    description:
      "Served only with a payment provider (docs/payments.md). No bearer token: the `Stripe-Signature` header is verified with the endpoint's signing secret (STRIPE_WEBHOOK_SECRET) over the raw body; an unverified delivery changes nothing. " +
      "`refund.updated` and `refund.failed` of refunds this app created settle or fail the claim's refund, once: the same event twice, or a late `pending` after `succeeded`, changes nothing. Other events are acknowledged.",
    headers: {
      "Stripe-Signature": { description: "Stripe's signature header (t=…,v1=…).", schema: z.string() },
    },
    body: {
      description: "A Stripe event, as Stripe sends it.",
      schema: z
        .object({ id: z.string(), type: z.string(), data: z.object({ object: z.record(z.string(), z.unknown()) }) })
        .loose(),
    },
    responses: {
      200: {
        description: "Verified: recorded (a refund of this app) or acknowledged.",
        schema: z.object({
          received: z.literal(true),
          recorded: z.boolean(),
          status: z.enum(["PENDING", "SETTLED", "FAILED"]).optional(),
        }),
      },
      404: { description: "No payment provider is configured here.", schema: ApiErrorSchema },
    },
  },
};

/** JSON Schema 2020-12 of a small zod schema (parameters), inlined where it is used. */
function inlineSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** Schemas shared by several operations, under their component names (requests: what a client sends; responses: what it gets). */
const SHARED = {
  input: [
    [ClaimSchema, "Claim"],
    [SubmissionSchema, "ClaimSubmission"],
    [ReviewRequestSchema, "ReviewDecision"],
  ],
  output: [
    [ApiErrorSchema, "Error"],
    [ClaimViewSchema, "ClaimView"],
    [ReviewViewSchema, "ReviewView"],
    [ReviewListItemSchema, "ReviewListItem"],
    [ReviewResultSchema, "ReviewResult"],
    [RefundProposalOutputSchema, "RefundProposal"],
    [ClaimExtractionOutputSchema, "ClaimExtraction"],
  ],
} as const satisfies Record<"input" | "output", readonly (readonly [z.ZodType, string])[]>;

/**
 * The components of one document: every request and response body is a named component (z.toJSONSchema over
 * a registry, with $refs between them), in two registries because a request is described as a client sends
 * it (defaults optional) and a response as the handler writes it.
 */
function componentRegistries() {
  const registries = { input: z.registry<{ id: string }>(), output: z.registry<{ id: string }>() };
  for (const io of ["input", "output"] as const)
    for (const [schema, id] of SHARED[io]) registries[io].add(schema, { id });
  return {
    /** A $ref to `schema` as a component (registered under `id` unless it is a shared one). */
    ref(schema: z.ZodType, io: "input" | "output", id: string) {
      const registry = registries[io];
      if (!registry.has(schema)) registry.add(schema, { id });
      return { $ref: `#/components/schemas/${registry.get(schema)!.id}` };
    },
    schemas(): Record<string, unknown> {
      const all: Record<string, unknown> = {};
      for (const io of ["input", "output"] as const) {
        const { schemas } = z.toJSONSchema(registries[io], {
          io,
          unrepresentable: "any",
          uri: (id) => `#/components/schemas/${id}`,
        });
        for (const [id, schema] of Object.entries(schemas)) {
          const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
          all[id] = rest;
        }
      }
      return Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
    },
  };
}

/** `POST /claims/{id}/review` → `postClaimsIdReview`. */
function operationIdOf(key: RouteKey): string {
  const [method, path] = key.split(" ") as [string, string];
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

const SECURITY: Record<Exclude<RouteAuth, "none">, string> = { intake: "intakeToken", reviewer: "reviewerToken" };

/** The OpenAPI 3.1 document of every route of ROUTES; throws OpenApiError for a route ROUTE_DOCS does not describe. */
export function openApiDocument(
  version: string,
  docs: Partial<Record<RouteKey, RouteDoc>> = ROUTE_DOCS,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const components = componentRegistries();
  for (const [key, route] of Object.entries(ROUTES) as [RouteKey, (typeof ROUTES)[RouteKey]][]) {
    const doc = docs[key];
    if (!doc)
      throw new OpenApiError(
        `route ${key} (app/manifest.ts ROUTES) has no description: add it to ROUTE_DOCS in functions/http/openapi.ts`,
      );
    const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    const parameters: unknown[] = names.map((name) => {
      const param = doc.pathParams?.[name];
      if (!param) throw new OpenApiError(`route ${key}: path parameter {${name}} has no description in ROUTE_DOCS`);
      return { name, in: "path", required: true, description: param.description, schema: inlineSchema(param.schema) };
    });
    for (const [name, q] of Object.entries(doc.query ?? {}))
      parameters.push({
        name,
        in: "query",
        required: false,
        description: q.description,
        schema: inlineSchema(q.schema),
      });
    for (const [name, h] of Object.entries(doc.headers ?? {}))
      parameters.push({
        name,
        in: "header",
        required: false,
        description: h.description,
        schema: inlineSchema(h.schema),
      });
    const operationId = operationIdOf(key);
    const common: Record<number, ResponseDoc> = {
      500: {
        description: "An internal error; the body carries the request id and no internals.",
        schema: ApiErrorSchema,
      },
    };
    if (doc.body || parameters.length > 0)
      common[400] = {
        description: "Invalid input: nothing was stored; `issues` names each field.",
        schema: ApiErrorSchema,
      };
    if (route.auth !== "none") {
      common[401] =
        "tokenPage" in route
          ? { description: "No Authorization header, and Accept does not prefer text/html." }
          : { description: "No Authorization header (API Gateway answers before any function runs)." };
      common[403] = { description: `The bearer token is not the ${route.auth} token.` };
    }
    const componentId = operationId.charAt(0).toUpperCase() + operationId.slice(1);
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries({ ...doc.responses, ...common } as Record<string, ResponseDoc>).sort(
      ([a], [b]) => Number(a) - Number(b),
    )) {
      const content = r.schema
        ? {
            content: {
              [r.contentType ?? "application/json"]: {
                schema:
                  r.contentType === "text/html"
                    ? { type: "string" }
                    : components.ref(r.schema, "output", `${componentId}${status}`),
              },
            },
          }
        : {};
      const headers = r.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(r.headers).map(([n, h]) => [
                n,
                { description: h.description, schema: inlineSchema(h.schema) },
              ]),
            ),
          }
        : {};
      responses[status] = { description: r.description, ...headers, ...content };
    }
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = {
      operationId,
      tags: [doc.tag],
      summary: doc.summary,
      description: doc.description,
      security: route.auth === "none" ? [] : [{ [SECURITY[route.auth]]: [] }],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(doc.body
        ? {
            requestBody: {
              required: true,
              description: doc.body.description,
              content: {
                "application/json": { schema: components.ref(doc.body.schema, "input", `${componentId}Request`) },
              },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Claims Crew HTTP API",
      version,
      description:
        "Refund claims decided by an LLM crew and a deterministic kernel (docs/http-api.md). The same paths locally (`claims serve`) and on AWS (the `api` output of `sst deploy`).",
    },
    tags: [
      { name: "claims", description: "Submit and read claims (intake token)." },
      { name: "reviews", description: "Human review (reviewer token)." },
      { name: "operations", description: "Open routes." },
    ],
    components: {
      schemas: components.schemas(),
      securitySchemes: {
        intakeToken: {
          type: "http",
          scheme: "bearer",
          description: "CLAIMS_API_TOKEN locally; the ApiToken secret on AWS.",
        },
        reviewerToken: {
          type: "http",
          scheme: "bearer",
          description:
            "Locally a reviewer's token (CLAIMS_REVIEWER_TOKEN or the reviewers file) or an OIDC JWT; on AWS a JWT of the reviewers' issuer.",
        },
      },
    },
    paths,
  };
}
