// API Gateway HTTP API (payload 2.0) plumbing for the HTTP functions: the event schema, the body limit,
// the response shapes of docs/http-api.md (`4xx { error: { code, message, issues? } }`) and the shared handler shell.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import type { ROUTES, RouteFact, RouteKey } from "../../app/manifest.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { errorFields, logSuccess } from "../observability/logger.ts";
import type { HandlerLogger } from "../observability/logger.ts";
import { NO_METRICS } from "../observability/metrics.ts";
import type { HandlerMetrics } from "../observability/metrics.ts";
import * as z from "zod";

/** Largest accepted request body (docs/http-api.md): larger bodies are answered 413. */
export const MAX_BODY_BYTES = 16 * 1024;

/** The fields of an API Gateway v2 event the intake handler reads. */
const ApiEventSchema = z.object({
  version: z.literal("2.0"),
  routeKey: z.string().min(1),
  rawPath: z.string(),
  headers: z.record(z.string(), z.string()).default({}),
  pathParameters: z.record(z.string(), z.string()).optional(),
  queryStringParameters: z.record(z.string(), z.string()).optional(),
  body: z.string().optional(),
  isBase64Encoded: z.boolean().default(false),
  requestContext: z.object({
    requestId: z.string(),
    http: z.object({ method: z.string(), path: z.string() }),
    /** What the route's authorizer found: a Lambda authorizer's context (`lambda`) or a JWT authorizer's claims (`jwt`). */
    authorizer: z.unknown().optional(),
  }),
});

/** A parsed API request. */
export type ApiRequest = z.infer<typeof ApiEventSchema>;

/** One problem with the input, for the 400 body. */
interface ApiIssue {
  path: string;
  message: string;
}

/** An HTTP response as API Gateway expects it from a Lambda integration. */
export type ApiResponse = APIGatewayProxyStructuredResultV2;

/** A JSON response. */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResponse {
  return {
    statusCode,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
    body: JSON.stringify(body),
  };
}

/** An error response `{ error: { code, message, issues? } }`. */
export function apiError(statusCode: number, code: string, message: string, issues?: readonly ApiIssue[]): ApiResponse {
  return json(statusCode, { error: { code, message, ...(issues && issues.length > 0 ? { issues } : {}) } });
}

/** An HTML response (with extra headers, e.g. the page's Content-Security-Policy). */
export function htmlResponse(body: string, headers: Record<string, string> = {}): ApiResponse {
  return { statusCode: 200, headers: { "content-type": "text/html; charset=utf-8", ...headers }, body };
}

/** The request body as bytes (API Gateway base64-encodes binary bodies). */
export function bodyBytes(request: ApiRequest): Buffer {
  if (request.body === undefined) return Buffer.alloc(0);
  return request.isBase64Encoded ? Buffer.from(request.body, "base64") : Buffer.from(request.body, "utf8");
}

/** Parses a JSON body, or explains why it is not JSON (as an issue on `(body)`). */
export function parseJsonBody(bytes: Buffer): { ok: true; value: unknown } | { ok: false; issues: ApiIssue[] } {
  if (bytes.length === 0)
    return { ok: false, issues: [{ path: "(body)", message: "the body is empty; send a JSON object" }] };
  try {
    return { ok: true, value: JSON.parse(bytes.toString("utf8")) as unknown };
  } catch (e) {
    return { ok: false, issues: [{ path: "(body)", message: `not valid JSON: ${(e as Error).message}` }] };
  }
}

/** The handler of one route: one request, the function's dependencies, one response. */
export type RouteHandler = (request: ApiRequest, deps: PipelineDeps) => Promise<ApiResponse>;

/** The route keys of app/manifest.ts a function serves (health is answered by the shared shell). */
export type RoutesOf<F extends RouteFact["fn"]> = Exclude<
  { [K in RouteKey]: (typeof ROUTES)[K]["fn"] extends F ? K : never }[RouteKey],
  "GET /health"
>;

/**
 * The shell every HTTP function shares: parse the API Gateway event, answer /health, dispatch to the route's
 * handler (404 for a route this function does not serve), log the outcome, and turn anything thrown into a
 * 500 that carries the request id and no internals — counted as a RequestFailures of its route (`metrics`),
 * since the function itself then succeeds and Lambda's Errors never sees it (infra/monitoring.ts alarms on it).
 */
export function createApiHandler(
  handlers: Partial<Record<RouteKey, RouteHandler>>,
  getDeps: () => PipelineDeps | Promise<PipelineDeps>,
  logger: HandlerLogger,
  metrics: Pick<HandlerMetrics, "emit"> = NO_METRICS,
) {
  return async (event: APIGatewayProxyEventV2): Promise<ApiResponse> => {
    const parsed = ApiEventSchema.safeParse(event);
    if (!parsed.success) {
      logger.error("not an API Gateway v2 event", { issues: parsed.error.issues.map((i) => i.path.join(".")) });
      return apiError(400, "BAD_REQUEST", "the request could not be read");
    }
    const request = parsed.data;
    const log = { requestId: request.requestContext.requestId, routeKey: request.routeKey };
    if (request.routeKey === "GET /health") return json(200, { status: "ok" });
    const route = Object.hasOwn(handlers, request.routeKey) ? handlers[request.routeKey as RouteKey] : undefined;
    if (!route)
      return apiError(404, "NOT_FOUND", `no route for ${request.requestContext.http.method} ${request.rawPath}`);
    try {
      const response = await route(request, await getDeps());
      logSuccess(logger, "request handled", { ...log, status: response.statusCode });
      return response;
    } catch (error) {
      logger.error("request failed", { ...log, error: errorFields(error) });
      metrics.emit({ metrics: { RequestFailures: 1 }, dimensions: [{ Route: request.routeKey }] });
      return apiError(500, "INTERNAL", `internal error (request ${log.requestId})`);
    }
  };
}
