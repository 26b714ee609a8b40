// Intake HTTP API (API Gateway HTTP API, payload 2.0): POST /claims, GET /claims/{id},
// GET /reports/{simulation_id}, GET /health. Validation, storage and start-up live in core
// (submitClaim); this maps requests and outcomes. A 5xx never carries internals.
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { ApiEventSchema, apiError, json } from "./lib/http.ts";
import type { ApiRequest, ApiResponse } from "./lib/http.ts";
import type { RouteKey } from "../infra/facts.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import { getClaim, getReport, postClaim } from "./lib/intake-routes.ts";
import { createLogger, errorFields } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";

/** The handler of every route of infra/facts.ts (a route added there without a handler here does not compile). */
const HANDLERS: Record<Exclude<RouteKey, "GET /health">, (request: ApiRequest, deps: PipelineDeps) => Promise<ApiResponse>> = {
  "POST /claims": postClaim,
  "GET /claims/{id}": getClaim,
  "GET /reports/{simulation_id}": getReport,
};

/** The intake handler over `getDeps` (production: SST links; locally: the emulators). */
export function createIntakeApiHandler(getDeps: DepsSource, options: { logger?: HandlerLogger } = {}) {
  const logger = options.logger ?? createLogger("claims-intake-api");
  return async (event: APIGatewayProxyEventV2): Promise<ApiResponse> => {
    const parsed = ApiEventSchema.safeParse(event);
    if (!parsed.success) {
      logger.error("not an API Gateway v2 event", { issues: parsed.error.issues.map((i) => i.path.join(".")) });
      return apiError(400, "BAD_REQUEST", "the request could not be read");
    }
    const request = parsed.data;
    const log = { requestId: request.requestContext.requestId, routeKey: request.routeKey };
    if (request.routeKey === "GET /health") return json(200, { status: "ok" });
    const route = Object.hasOwn(HANDLERS, request.routeKey) ? HANDLERS[request.routeKey as keyof typeof HANDLERS] : undefined;
    if (!route) return apiError(404, "NOT_FOUND", `no route for ${request.requestContext.http.method} ${request.rawPath}`);
    try {
      const response = await route(request, await getDeps());
      logger.info("request handled", { ...log, status: response.statusCode });
      return response;
    } catch (error) {
      logger.error("request failed", { ...log, error: errorFields(error) });
      return apiError(500, "INTERNAL", `internal error (request ${log.requestId})`);
    }
  };
}

/** The deployed handler (infra/api.ts: IntakeApi). */
export const handler = createIntakeApiHandler(productionDeps);
