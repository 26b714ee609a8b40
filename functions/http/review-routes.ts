// The routes of the reviewer API (docs/http-api.md): each maps one request to one pipeline call and its outcome
// to a status code. Nothing is stored for a refused request (400, 404, 409).
import { ReviewStatusSchema, reviewListItem } from "../../core/kernel/review.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { reviewListKey } from "../../pipeline/ports.ts";
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
  return json(200, {
    // Claims' reviews and failed refunds' reviews, merged oldest first as the page was cut (reviewListKey).
    items: [...page.items.map((i) => reviewListItem(i.review, i.context)), ...page.refundReviews].sort(byListKey),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
}

function byListKey(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const key = (x: Record<string, unknown>) => reviewListKey(String(x.requested_at), String(x.claim_id));
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/** `POST /claims/{id}/review`: 200 with the decided review; 400 invalid; 404 unknown claim; 409 not pending, already decided, not allowed, or a reject rule that now fails. */
export async function postReview(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const who = reviewerOf(request.requestContext.authorizer);
  if (!who.ok) return apiError(403, "NOT_A_REVIEWER", who.message);
  const id = request.pathParameters?.id ?? "";
  if (!CLAIM_ID.test(id)) return apiError(400, "INVALID_CLAIM_ID", "claim ids hold 1-128 letters, digits, _ and -");
  const bytes = bodyBytes(request);
  if (bytes.length > MAX_BODY_BYTES)
    return apiError(413, "PAYLOAD_TOO_LARGE", `the body is ${bytes.length} bytes; the limit is ${MAX_BODY_BYTES}`);
  const body = parseJsonBody(bytes);
  if (!body.ok) return apiError(400, "INVALID_JSON", "the body is not a JSON object", body.issues);
  // The decision is recorded under the authenticated reviewer, whatever the body says.
  const result = await decideReview(id, body.value, deps, who.reviewer);
  if (result.ok) return json(200, result.body);
  return apiError(result.status, result.code, result.message, "issues" in result ? result.issues : undefined);
}

/** `GET /review`: the reviewers' page (constant HTML; it asks for the reviewer token and calls the routes above). */
export async function getReviewPage(): Promise<ApiResponse> {
  return htmlResponse(renderReviewPage(), htmlSecurityHeaders(REVIEW_PAGE_CSP));
}
