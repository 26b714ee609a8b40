// Intake HTTP API (API Gateway HTTP API, payload 2.0): the routes infra/facts.ts gives intakeApi —
// POST /claims, GET /claims, GET /claims/{id}, GET /reports (served claims), GET /reports/{simulation_id},
// GET /health. Validation, storage and start-up live in the pipeline (submitClaim); the routes map requests
// and outcomes.
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createApiHandler } from "./lib/http.ts";
import type { RouteHandler, RoutesOf } from "./lib/http.ts";
import { getClaim, getReport, getServedReport, listClaims, postClaim, withIntakeToken } from "./lib/intake-routes.ts";
import { getOpenApi } from "./lib/openapi-route.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { measured } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";
import type { Admission } from "../pipeline/intake.ts";
import { linkedResources } from "./lib/resources.ts";
import { LINKS } from "../infra/facts.ts";

/** The handler of every intakeApi route of infra/facts.ts (a route added there without one here does not compile). */
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
  return measured("intakeApi", getDeps, options.metrics, (deps) =>
    createApiHandler(
      handlers(options.admit, options.intakeToken ?? (() => "")),
      deps,
      options.logger ?? createLogger("claims-intake-api"),
    ),
  );
}

/** The deployed handler (infra/api.ts: IntakeApi). */
export const handler = createIntakeApiHandler(productionDeps, {
  intakeToken: () => linkedResources().secret(LINKS.apiToken),
});
