// The routes of the intake HTTP API (docs/http-api.md), each mapping one request to one core call and
// its outcome to a status code. Customer text never reaches a log line from here.
import { ClaimStatusSchema, claimView, VerdictValueSchema } from "../../core/kernel/claim-record.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { reconcileSettlements } from "../../core/kernel/settlement.ts";
import { parseIsoMs } from "../../core/integrity/time.ts";
import { submitClaim } from "../../pipeline/intake.ts";
import type { Admission } from "../../pipeline/intake.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import type { ClaimQuery } from "../../pipeline/ports.ts";
import { htmlSecurityHeaders } from "../../report/csp.ts";
import { REPORT_CSP } from "../../report/render.ts";
import { renderAuditReport, renderServedReport } from "../../report/served.ts";
import { TOKEN_PAGE_CSP, prefersHtml, renderTokenPage } from "../../report/token-page.ts";
import { recentServedEvents } from "../../pipeline/served.ts";
import { bearerToken, tokensEqual } from "./bearer.ts";
import { MAX_BODY_BYTES, apiError, bodyBytes, htmlResponse, json, parseJsonBody } from "./http.ts";
import type { ApiRequest, ApiResponse, RouteHandler } from "./http.ts";

/** What a claim id, a simulation id and an Idempotency-Key may hold (the OpenAPI description reads these too). */
export const CLAIM_ID = /^[A-Za-z0-9_-]{1,128}$/;
export const SIMULATION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;
/** A `GET /claims` cursor: the last listed claim's `<received_at>#<claim_id>`. */
export const LIST_CURSOR = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z#[A-Za-z0-9_-]{1,128}$/;
const LIST_PARAMETERS = ["status", "verdict", "since", "limit", "cursor"];

/**
 * `POST /claims`: 202 `{ claim_id, status }`; 400 invalid input (nothing stored); 409 Idempotency-Key reused with another
 * body; 413 body over 16 KB; 429 with Retry-After when `admit` (the local stack's bound of open claims) refuses it.
 */
export async function postClaim(
  request: ApiRequest,
  deps: PipelineDeps,
  admit?: () => Promise<Admission>,
): Promise<ApiResponse> {
  const bytes = bodyBytes(request);
  if (bytes.length > MAX_BODY_BYTES)
    return apiError(413, "PAYLOAD_TOO_LARGE", `the body is ${bytes.length} bytes; the limit is ${MAX_BODY_BYTES}`);
  const key = request.headers["idempotency-key"];
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
    return apiError(400, "INVALID_IDEMPOTENCY_KEY", "Idempotency-Key must be 1-128 visible ASCII characters");
  const body = parseJsonBody(bytes);
  if (!body.ok) return apiError(400, "INVALID_JSON", "the body is not a JSON object", body.issues);
  const result = await submitClaim(
    body.value,
    { ...(key === undefined ? {} : { idempotencyKey: key }), ...(admit ? { admit } : {}) },
    deps,
  );
  if (result.ok)
    return json(202, { claim_id: result.claimId, status: result.status }, { location: `/claims/${result.claimId}` });
  if (result.code === "INVALID_INPUT") return apiError(400, result.code, result.message, result.issues);
  if (result.code === "ORDER_SOURCE_UNAVAILABLE") return apiError(503, result.code, result.message);
  if (result.code === "OVERLOADED") {
    const refused = apiError(429, result.code, result.message);
    return { ...refused, headers: { ...refused.headers, "retry-after": String(result.retryAfterS) } };
  }
  return apiError(409, result.code, result.message);
}

/** Reads the query of `GET /claims`; a bad parameter is named in the 400. */
function parseClaimListQuery(
  q: Readonly<Record<string, string | undefined>>,
): { ok: true; query: ClaimQuery } | { ok: false; response: ApiResponse } {
  const bad = (parameter: string, message: string) => ({
    ok: false as const,
    response: apiError(400, "INVALID_QUERY", `${parameter}: ${message}`, [{ path: parameter, message }]),
  });
  const unknown = Object.keys(q).find((k) => !LIST_PARAMETERS.includes(k));
  if (unknown !== undefined) return bad(unknown, `unknown parameter; GET /claims takes ${LIST_PARAMETERS.join(", ")}`);
  let statuses: ClaimRecord["status"][] | undefined;
  if (q.status !== undefined) {
    const parsed = q.status.split(",").map((s) => ClaimStatusSchema.safeParse(s.trim().toUpperCase()));
    if (parsed.some((p) => !p.success))
      return bad(
        "status",
        `must be one of ${ClaimStatusSchema.options.join(", ")} (or several, comma-separated), got '${q.status}'`,
      );
    statuses = parsed.map((p) => p.data!);
  }
  const verdict = q.verdict === undefined ? undefined : VerdictValueSchema.safeParse(q.verdict.toUpperCase());
  if (verdict && !verdict.success)
    return bad("verdict", `must be one of ${VerdictValueSchema.options.join(", ")}, got '${q.verdict}'`);
  const sinceMs = q.since === undefined ? undefined : parseIsoMs(q.since);
  if (q.since !== undefined && sinceMs === undefined)
    return bad("since", `must be an ISO date or timestamp such as 2026-06-01T12:00:00Z, got '${q.since}'`);
  const limit = q.limit === undefined ? 50 : Number(q.limit);
  if (!/^\d+$/.test(q.limit ?? "50") || limit < 1 || limit > 200)
    return bad("limit", `must be an integer from 1 to 200, got '${q.limit}'`);
  if (q.cursor !== undefined && !LIST_CURSOR.test(q.cursor))
    return bad("cursor", "must be the next_cursor of a previous page");
  return {
    ok: true,
    query: {
      limit,
      ...(statuses ? { statuses } : {}),
      ...(verdict?.success ? { verdict: verdict.data } : {}),
      ...(sinceMs === undefined ? {} : { since: new Date(sinceMs).toISOString() }),
      ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
    },
  };
}

/** `GET /claims?status=&verdict=&since=&limit=&cursor=`: claim views, newest receipt first, `{ items, next_cursor? }`. */
export async function listClaims(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const parsed = parseClaimListQuery(request.queryStringParameters ?? {});
  if (!parsed.ok) return parsed.response;
  const page = await deps.claims.listClaims(parsed.query);
  const items = await Promise.all(page.items.map((record) => loadClaimView(record, deps)));
  return json(200, { items, ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) });
}

/** `GET /claims/{id}`: the claim's public view, or 404. */
export async function getClaim(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const id = request.pathParameters?.id ?? "";
  if (!CLAIM_ID.test(id)) return apiError(400, "INVALID_CLAIM_ID", "claim ids hold 1-128 letters, digits, _ and -");
  const record = await deps.claims.getClaim(id);
  if (!record) return apiError(404, "NOT_FOUND", `claim ${id} not found`);
  return json(200, await loadClaimView(record, deps));
}

/**
 * A claim's public view with only the reads it needs, in parallel: its review only when the claim says it has one
 * (an ESCALATE verdict or NEEDS_REVIEW: the only claims a review is opened for), its settlement only once its
 * refund was executed. A claim in progress costs one read: the claim itself.
 */
export async function loadClaimView(
  record: ClaimRecord,
  deps: Pick<PipelineDeps, "reviews" | "settlements">,
): Promise<Record<string, unknown>> {
  const hasReview = record.verdict === "ESCALATE" || record.status === "NEEDS_REVIEW";
  const [review, settlement] = await Promise.all([
    hasReview ? deps.reviews.getReview(record.claim_id) : undefined,
    record.executed ? deps.settlements?.get(record.claim_id) : undefined,
  ]);
  return claimView(record, review, settlement);
}

/**
 * `GET /reports/{simulation_id}`: the HTML report built from the simulation's audit — a batch run's report, or
 * the served view of claims sent to the API with this simulation_id — or 404.
 */
export async function getReport(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const id = request.pathParameters?.simulation_id ?? "";
  if (!SIMULATION_ID.test(id))
    return apiError(400, "INVALID_SIMULATION_ID", "simulation ids hold 1-128 letters, digits and _ . : -");
  const events = await deps.audit.bySimulation(id);
  if (events.length === 0) return apiError(404, "NOT_FOUND", `no audit recorded for simulation ${id}`);
  return htmlResponse(
    renderAuditReport(events, { title: `Claims Crew — ${id}`, generatedAt: new Date(deps.clock.now()).toISOString() }),
    htmlSecurityHeaders(REPORT_CSP),
  );
}

/**
 * How many claims the served view shows unless `?limit=` says otherwise, and the most it shows: a claim is
 * about 8 KB of HTML with its decision cycle, so 200 claims (about 1.7 MB) stay well inside API Gateway's
 * 6 MB response limit.
 */
export const SERVED_REPORT_LIMITS = { default: 100, max: 200 } as const;

/** `GET /reports?limit=`: the live view of the most recent claims sent without a simulation_id (200 also when there are none). */
export async function getServedReport(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const raw = request.queryStringParameters?.limit;
  const limit = raw === undefined ? SERVED_REPORT_LIMITS.default : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > SERVED_REPORT_LIMITS.max) {
    return apiError(400, "INVALID_QUERY", `limit must be an integer from 1 to ${SERVED_REPORT_LIMITS.max}`, [
      { path: "limit", message: "out of range" },
    ]);
  }
  const events = await recentServedEvents(deps, limit);
  const settlements = deps.settlements ? await deps.settlements.list() : [];
  const page = renderServedReport(events, {
    scope: `the ${limit} most recent claims (at most)`,
    generatedAt: new Date(deps.clock.now()).toISOString(),
    ...(settlements.length > 0 ? { reconciliation: reconcileSettlements(settlements) } : {}),
  });
  return htmlResponse(page, htmlSecurityHeaders(REPORT_CSP));
}

/**
 * The report routes check the intake token themselves (API Gateway lets them through, app/manifest.ts
 * `tokenPage`): without an Authorization header a request that prefers HTML gets the page that asks for the
 * token (nothing of a claim in it) and any other gets 401; a token that is not `expected` (none configured:
 * none is) gets 403; the intake token gets the route.
 */
export function withIntakeToken(route: RouteHandler, expected: () => string | Promise<string>): RouteHandler {
  return async (request, deps) => {
    const header = request.headers.authorization;
    if (header === undefined || header === "")
      return prefersHtml(request.headers.accept)
        ? htmlResponse(renderTokenPage(), htmlSecurityHeaders(TOKEN_PAGE_CSP))
        : apiError(401, "UNAUTHORIZED", "send Authorization: Bearer <token> (CLAIMS_API_TOKEN)");
    const token = bearerToken(header);
    if (token === undefined || !tokensEqual(token, await expected()))
      return apiError(403, "FORBIDDEN", "this route needs the intake token (CLAIMS_API_TOKEN)");
    return route(request, deps);
  };
}
