// The routes of the reviewer API (docs/http-api.md): each maps one request to one pipeline call and its outcome
// to a status code. Nothing is stored for a refused request (400, 404, 409).
import { byDueThenAmount, ReviewStatusSchema, reviewListItem } from "../../core/kernel/review.ts";
import { reviewDesk, takeReview } from "../../pipeline/review-desk.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { decideReview, listReviews } from "../../pipeline/review.ts";
import { htmlSecurityHeaders } from "../../report/csp.ts";
import { REVIEW_PAGE_CSP, renderReviewPage } from "../../report/review-page.ts";
import { CLAIM_ID, LIST_CURSOR } from "./intake-routes.ts";
import { MAX_BODY_BYTES, apiError, bodyBytes, htmlResponse, json, parseJsonBody } from "./http.ts";
import type { ApiRequest, ApiResponse } from "./http.ts";
import { reviewerOf } from "./reviewer-identity.ts";

/** The query parameters `GET /reviews` takes; any other is refused, as `GET /claims` refuses its unknown ones. */
const REVIEW_LIST_PARAMETERS = ["status", "limit", "cursor"];

/** `GET /reviews?status=PENDING&limit=&cursor=`: reviews oldest first, `{ items, next_cursor? }`. */
export async function getReviews(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const who = reviewerOf(request.requestContext.authorizer);
  if (!who.ok) return apiError(403, "NOT_A_REVIEWER", who.message);
  const q = request.queryStringParameters ?? {};
  const unknown = Object.keys(q).find((k) => !REVIEW_LIST_PARAMETERS.includes(k));
  if (unknown !== undefined)
    return apiError(
      400,
      "INVALID_QUERY",
      `${unknown}: unknown parameter; GET /reviews takes ${REVIEW_LIST_PARAMETERS.join(", ")}`,
      [{ path: unknown, message: "unknown parameter" }],
    );
  const status = ReviewStatusSchema.safeParse(q.status ?? "PENDING");
  if (!status.success)
    return apiError(400, "INVALID_QUERY", `status must be one of ${ReviewStatusSchema.options.join(", ")}`, [
      { path: "status", message: "unknown status" },
    ]);
  const limit = q.limit === undefined ? 50 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    return apiError(400, "INVALID_QUERY", "limit must be an integer from 1 to 200", [
      { path: "limit", message: "out of range" },
    ]);
  if (q.cursor !== undefined && !LIST_CURSOR.test(q.cursor))
    return apiError(400, "INVALID_QUERY", "cursor must be the next_cursor of a previous page", [
      { path: "cursor", message: "not a cursor" },
    ]);
  const page = await listReviews({ status: status.data, limit, ...(q.cursor ? { cursor: q.cursor } : {}) }, deps);
  const desk = reviewDesk(deps);
  return json(200, {
    // Who is asking, as the desk shows it: their id, name and approval limit (docs/reviews.md#reviewer-limits).
    reviewer: {
      id: who.reviewer.id,
      ...(who.reviewer.name ? { name: who.reviewer.name } : {}),
      ...(who.reviewer.maxApprovalEur !== undefined ? { max_approval_eur: who.reviewer.maxApprovalEur } : {}),
    },
    // Claims' reviews and failed refunds' reviews, as the page was cut, the soonest due first, then the most money.
    items: [...page.items.map((i) => reviewListItem(i.review, i.context, desk)), ...page.refundReviews].sort(
      byDueThenAmount,
    ),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
}

/** `POST /claims/{id}/review`: 200 with the decided review; 400 invalid; 404 unknown claim; 409 not pending, already decided, not allowed, or a reject rule that now fails. */
/** A POST on one claim: its id from the path and its JSON body, or the 400 / 413 answer naming what is wrong. */
export function claimPost(
  request: ApiRequest,
): { ok: true; id: string; body: unknown } | { ok: false; response: ApiResponse } {
  const id = request.pathParameters?.id ?? "";
  if (!CLAIM_ID.test(id))
    return { ok: false, response: apiError(400, "INVALID_CLAIM_ID", "claim ids hold 1-128 letters, digits, _ and -") };
  const bytes = bodyBytes(request);
  if (bytes.length > MAX_BODY_BYTES)
    return {
      ok: false,
      response: apiError(413, "PAYLOAD_TOO_LARGE", `the body is ${bytes.length} bytes; the limit is ${MAX_BODY_BYTES}`),
    };
  const body = parseJsonBody(bytes);
  if (!body.ok)
    return { ok: false, response: apiError(400, "INVALID_JSON", "the body is not a JSON object", body.issues) };
  return { ok: true, id, body: body.value };
}

export async function postReview(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const who = reviewerOf(request.requestContext.authorizer);
  if (!who.ok) return apiError(403, "NOT_A_REVIEWER", who.message);
  const post = claimPost(request);
  if (!post.ok) return post.response;
  // The decision is recorded under the authenticated reviewer, whatever the body says.
  const result = await decideReview(post.id, post.body, deps, who.reviewer);
  if (result.ok) return json(200, result.body);
  return apiError(result.status, result.code, result.message, "issues" in result ? result.issues : undefined);
}

/**
 * `POST /claims/{id}/review/take`: 200 `{ claim_id, review_id, taken_by, taken_until }` — the review is the
 * caller's for REVIEW_LEASE_MS (taking it again renews it); 409 `TAKEN_BY` while another reviewer holds it,
 * `NO_PENDING_REVIEW` / `REVIEW_ALREADY_DECIDED` when there is nothing to take; 404 for an unknown claim.
 */
export async function postTake(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const who = reviewerOf(request.requestContext.authorizer);
  if (!who.ok) return apiError(403, "NOT_A_REVIEWER", who.message);
  const id = request.pathParameters?.id ?? "";
  if (!CLAIM_ID.test(id)) return apiError(400, "INVALID_CLAIM_ID", "claim ids hold 1-128 letters, digits, _ and -");
  const bytes = bodyBytes(request);
  if (bytes.length > MAX_BODY_BYTES)
    return apiError(413, "PAYLOAD_TOO_LARGE", `the body is ${bytes.length} bytes; the limit is ${MAX_BODY_BYTES}`);
  if (bytes.toString("utf8").trim() !== "") {
    const body = parseJsonBody(bytes);
    const empty =
      body.ok && typeof body.value === "object" && body.value !== null && Object.keys(body.value).length === 0;
    if (!empty)
      return apiError(400, "INVALID_INPUT", "taking a review takes no body (send none, or {})", [
        { path: "(body)", message: "expected no body or {}" },
      ]);
  }
  const result = await takeReview(id, who.reviewer, deps);
  if (result.ok) return json(200, result.body);
  return apiError(result.status, result.code, result.message);
}

/** `GET /review`: the reviewers' page (constant HTML; it asks for the reviewer token and calls the routes above). */
export async function getReviewPage(): Promise<ApiResponse> {
  return htmlResponse(renderReviewPage(), htmlSecurityHeaders(REVIEW_PAGE_CSP));
}
