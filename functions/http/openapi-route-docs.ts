// What each route of app/manifest.ts ROUTES is for, what it takes and what it answers, as OpenAPI describes it
// (functions/http/openapi.ts builds the document from these, adding the errors every route shares).
import * as z from "zod";
import { ClaimStatusSchema, VerdictValueSchema } from "../../core/kernel/claim-record.ts";
import { ReviewStatusSchema } from "../../core/kernel/review.ts";
import { ReturnEventBodySchema } from "../../core/kernel/returns.ts";
import type { RouteKey } from "../../app/manifest.ts";
import { PAYMENT_PROVIDERS } from "../../app/payment-provider.ts";
import { SubmissionSchema } from "../../pipeline/decide/intake.ts";
import { MAX_BODY_BYTES } from "./http.ts";
import { CLAIM_ID, IDEMPOTENCY_KEY, LIST_CURSOR, SERVED_REPORT_LIMITS, SIMULATION_ID } from "./intake-routes.ts";
import {
  ApiErrorSchema,
  ClaimViewSchema,
  ReviewListItemSchema,
  ReviewRequestSchema,
  ReviewResultSchema,
} from "./openapi-schemas.ts";

/** One response of a route. */
export interface ResponseDoc {
  readonly description: string;
  readonly schema?: z.ZodType;
  /** application/json unless said. */
  readonly contentType?: "application/json" | "text/html";
  readonly headers?: Readonly<Record<string, { description: string; schema: z.ZodType }>>;
}

/** How one route is described: what it is for, what it takes and what it answers (errors common to all routes are added). */
export interface RouteDoc {
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

const NotFound = { description: "No such claim (or report).", schema: ApiErrorSchema };

/** Every route of ROUTES, described. */
export const ROUTE_DOCS: Partial<Record<RouteKey, RouteDoc>> = {
  "POST /claims": {
    tag: "claims",
    summary: "Submit a claim",
    description:
      "Stores the claim and answers at once; the crew and the kernel decide it asynchronously (poll GET /claims/{id} or consume the bus events). " +
      "Give exactly one of `claim` (structured) or `claim_text` (free text, extracted by one LLM call). Invalid input stores nothing. " +
      "A zero or negative amount is accepted here and rejected by the kernel (INVALID_AMOUNT). " +
      "A claim that names `lines` may leave out `amount_eur` and `category` (or ask an `amount` per line): intake completes it from its order — " +
      "each line's amount defaults to what its units cost, the claim's amount is their sum — and a line the order does not have, more units than were bought " +
      "or an amount not exact to the order's currency is a 400 naming the field (docs/orders.md#claims-on-lines).",
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
      503: {
        description:
          "ORDER_SOURCE_UNAVAILABLE: a claim on lines to complete from its order, and the order source could not answer (or answered a garbled order); nothing was stored, try again.",
        schema: ApiErrorSchema,
      },
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
        description: "RECEIVED, RUNNING, DECIDED, NEEDS_REVIEW or AWAITING_RETURN (several comma-separated).",
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
      "The claim's status (RECEIVED → RUNNING → DECIDED | NEEDS_REVIEW, or AWAITING_RETURN until a return-required ACCEPT's item comes back), its verdict and reason once decided, its return, its review once one exists.",
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
  "POST /claims/{id}/return-events": {
    tag: "claims",
    summary: "Report a return's progress",
    description:
      "A shop or warehouse reports where the item of a return-required ACCEPT is (docs/returns.md), with the intake token: " +
      "in_transit, delivered, inspected_ok or inspected_failed. Idempotent by event_id; duplicates and any order are harmless. " +
      "The refund is executed once, when the policy's pay_on event arrives; a failed inspection, or an event after the return deadline closed the claim, opens a review.",
    pathParams: { id: ClaimIdParam },
    body: { description: "The return event.", schema: ReturnEventBodySchema },
    responses: {
      200: {
        description:
          "Recorded; `decision` says what the claim's recorded events decided: WAIT, PAY, REVIEW (or RECORDED: this event again).",
        schema: z.object({ claim_id: z.string(), status: ClaimStatusSchema, decision: z.string() }),
      },
      400: { description: "INVALID_INPUT: the issue names the field.", schema: ApiErrorSchema },
      404: NotFound,
      409: {
        description:
          "NOT_AWAITING_RETURN: the claim awaits no return (it asks none, or was paid, reviewed or closed); EVENT_ID_REUSED: the event_id was recorded for another event.",
        schema: ApiErrorSchema,
      },
      413: { description: `PAYLOAD_TOO_LARGE: the body is over ${MAX_BODY_BYTES} bytes.`, schema: ApiErrorSchema },
    },
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
          "REVIEW_ALREADY_DECIDED (another decision was taken), NO_PENDING_REVIEW, DECISION_NOT_ALLOWED, TAKEN_BY (another reviewer holds the review), APPROVAL_LIMIT (a second approval beyond the reviewer's max_approval), APPROVALS_CHANGED (other approvals on the order, or for its customer, kept landing: try again), REVIEW_CHANGED (the review kept changing while the decision was taken: try again), or the reject rule that now fails (e.g. EXCEEDS_REFUNDABLE_BALANCE).",
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
  // Each payment provider's webhook, described by its declaration (app/payment-providers/).
  ...webhookRouteDocs(),
};

/**
 * The description of every payment provider's webhook route: what the provider declares (summary, description, its
 * signature header, its body) and the answers every webhook route gives (functions/http/webhook-routes.ts).
 */
function webhookRouteDocs(): Partial<Record<RouteKey, RouteDoc>> {
  return Object.fromEntries(
    PAYMENT_PROVIDERS.flatMap((p) => {
      if (!("webhook" in p)) return [];
      const doc = p.webhook.doc;
      const route: RouteDoc = {
        tag: "operations",
        summary: doc.summary,
        description: doc.description,
        headers: { [doc.signatureHeader.name]: { description: doc.signatureHeader.description, schema: z.string() } },
        body: { description: doc.body.description, schema: doc.body.schema },
        responses: {
          200: {
            description: "Verified: recorded (a refund of this app) or acknowledged.",
            schema: z.object({
              received: z.literal(true),
              recorded: z.boolean(),
              status: z.enum(["PENDING", "SETTLED", "FAILED"]).optional(),
            }),
          },
          404: { description: `PAYMENT_PROVIDER is not ${p.name} here.`, schema: ApiErrorSchema },
        },
      };
      return [[`POST ${p.webhook.path}`, route]];
    }),
  );
}
