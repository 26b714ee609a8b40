// HTTP API Lambda authorizers (simple responses): the bearer token must equal the route's secret — ApiToken
// for the intake routes, ReviewerToken for the review routes (two credentials: neither opens the other's routes).
// The comparison is constant-time; the token is never logged.
import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerResult } from "aws-lambda";
import * as z from "zod";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { createHandlerMetrics, withColdStart } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";
import { linkedResources } from "./lib/resources.ts";
import { bearerToken, tokensEqual } from "./lib/bearer.ts";

export { bearerToken, tokensEqual };
import { LINKS } from "../infra/facts.ts";

const AuthorizerEventSchema = z.object({
  routeKey: z.string().default(""),
  headers: z.record(z.string(), z.string()).default({}),
  identitySource: z.array(z.string()).nullish(),
});

/** The authorizer over `getToken` (production: Resource.ApiToken.value; locally: CLAIMS_API_TOKEN). */
export function createAuthorizerHandler(
  getToken: () => string | Promise<string>,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  const logger = options.logger ?? createLogger("claims-authorizer");
  return withColdStart(async (event: APIGatewayRequestAuthorizerEventV2): Promise<APIGatewaySimpleAuthorizerResult> => {
    const parsed = AuthorizerEventSchema.safeParse(event);
    if (!parsed.success) {
      logger.warn("not an authorizer event: denied");
      return { isAuthorized: false };
    }
    const token = bearerToken(parsed.data.headers.authorization ?? parsed.data.identitySource?.[0]);
    const isAuthorized = token !== undefined && tokensEqual(token, await getToken());
    logger.info("authorization decided", { routeKey: parsed.data.routeKey, isAuthorized, bearer: token !== undefined });
    return { isAuthorized };
  }, options.metrics ?? createHandlerMetrics("authorizer"));
}

/** The deployed authorizer of the intake routes (infra/api.ts: IntakeToken): Resource.ApiToken. */
export const handler = createAuthorizerHandler(() => linkedResources().secret(LINKS.apiToken));

/** The deployed authorizer of the review routes (infra/api.ts: ReviewerToken): Resource.ReviewerToken. */
export const reviewerHandler = createAuthorizerHandler(() => linkedResources().secret(LINKS.reviewerToken), {
  logger: createLogger("claims-reviewer-authorizer"),
  metrics: createHandlerMetrics("reviewerAuthorizer"),
});
