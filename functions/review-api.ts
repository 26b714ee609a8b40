// Reviewer HTTP API (API Gateway HTTP API, payload 2.0): the routes infra/facts.ts gives reviewApi —
// GET /reviews and POST /claims/{id}/review (docs/http-api.md), behind the reviewer token, and the reviewers' page
// GET /review (open: it holds no secret, it asks for the token). The decision rules
// live in the pipeline (decideReview); the routes map requests and outcomes.
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createApiHandler } from "./lib/http.ts";
import type { RouteHandler, RoutesOf } from "./lib/http.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { getReviewPage, getReviews, postReview } from "./lib/review-routes.ts";
import { measured } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";

/** The handler of every reviewApi route of infra/facts.ts. */
const HANDLERS: Record<RoutesOf<"reviewApi">, RouteHandler> = {
  "GET /reviews": getReviews,
  "POST /claims/{id}/review": postReview,
  "GET /review": getReviewPage,
};

/** The reviewer handler over `getDeps`. */
export function createReviewApiHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("reviewApi", getDeps, options.metrics, (deps) =>
    createApiHandler(HANDLERS, deps, options.logger ?? createLogger("claims-review-api")),
  );
}

/** The deployed handler (infra/api.ts: ReviewApi). */
export const handler = createReviewApiHandler(productionDeps);
