// Intake HTTP API (API Gateway HTTP API, payload 2.0): the routes app/manifest.ts gives intakeApi —
// POST /claims, GET /claims, GET /claims/{id}, GET /reports (served claims), GET /reports/{simulation_id},
// GET /health. Validation, storage and start-up live in the pipeline (submitClaim); the routes map requests
// and outcomes.
import { productionDeps } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { createApiHandler } from "./http/http.ts";
import type { RouteHandler, RoutesOf } from "./http/http.ts";
import { getClaim, getReport, getServedReport, listClaims, postClaim, withIntakeToken } from "./http/intake-routes.ts";
import { getOpenApi } from "./http/openapi-route.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";
import type { Admission } from "../pipeline/intake.ts";
import { linkedResources } from "./composition/resources.ts";
import { LINKS } from "../app/manifest.ts";

/** The handler of every intakeApi route of app/manifest.ts (a route added there without one here does not compile). */
function handlers(
  admit: (() => Promise<Admission>) | undefined,
  intakeToken: () => string | Promise<string>,
): Record<RoutesOf<"intakeApi">, RouteHandler> {
  return {
    "POST /claims": (request, deps) => postClaim(request, deps, admit),
    "GET /claims": listClaims,
    "GET /claims/{id}": getClaim,
    "GET /reports/{simulation_id}": withIntakeToken(getReport, intakeToken),
    "GET /reports": withIntakeToken(getServedReport, intakeToken),
    "GET /openapi.json": getOpenApi,
  };
}

/** The intake handler over `getDeps` (production: SST links; locally: the emulators, with `admit` bounding the open claims). */
export function createIntakeApiHandler(
  getDeps: DepsSource,
  options: {
    logger?: HandlerLogger;
    metrics?: HandlerMetrics;
    admit?: () => Promise<Admission>;
    /** The intake token the report routes check themselves (absent: no token opens them). */
    intakeToken?: () => string | Promise<string>;
  } = {},
) {
  return measured("intakeApi", getDeps, options.metrics, (deps, metrics) =>
    createApiHandler(
      handlers(options.admit, options.intakeToken ?? (() => "")),
      deps,
      options.logger ?? createLogger("claims-intake-api"),
      metrics,
    ),
  );
}

/** The deployed handler (infra/api.ts: IntakeApi). */
export const handler = createIntakeApiHandler(productionDeps, {
  intakeToken: () => linkedResources().secret(LINKS.apiToken),
});
