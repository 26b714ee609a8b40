// Reviewer HTTP API (API Gateway HTTP API, payload 2.0): the routes app/manifest.ts gives reviewApi —
// GET /reviews, POST /claims/{id}/review and POST /claims/{id}/review/take (docs/http-api.md), behind the reviewer token, and the reviewers' page
// GET /review (open: it holds no secret, it asks for the token), and POST /claims/{id}/return-events behind the
// intake token (a shop or warehouse reports a return's progress, docs/returns.md). The decision rules
// live in the pipeline (decideReview); the routes map requests and outcomes.
import { productionDeps } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { createApiHandler } from "./http/http.ts";
import type { RouteHandler, RoutesOf } from "./http/http.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { getReviewPage, getReviews, postReview, postTake } from "./http/review-routes.ts";
import { postReturnEvents } from "./http/return-routes.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";

/** The handler of every reviewApi route of app/manifest.ts. */
const HANDLERS: Record<RoutesOf<"reviewApi">, RouteHandler> = {
  "GET /reviews": getReviews,
  "POST /claims/{id}/review": postReview,
  "POST /claims/{id}/review/take": postTake,
  "GET /review": getReviewPage,
  "POST /claims/{id}/return-events": postReturnEvents,
};

/** The reviewer handler over `getDeps`. */
export function createReviewApiHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("reviewApi", getDeps, options.metrics, (deps, metrics) =>
    createApiHandler(HANDLERS, deps, options.logger ?? createLogger("claims-review-api"), metrics),
  );
}

/** The deployed handler (infra/api.ts: ReviewApi). */
export const handler = createReviewApiHandler(productionDeps);
