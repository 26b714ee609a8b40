// HTTP API Lambda authorizers (simple responses): the bearer token must equal the route's secret — ApiToken
// for the intake routes; locally, a reviewer's token for the review routes (on AWS those use API Gateway's JWT
// authorizer). Separate credentials: neither opens the other's routes.
// The comparison is constant-time; the token is never logged.
import type {
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerResult,
  APIGatewaySimpleAuthorizerWithContextResult,
} from "aws-lambda";
import * as z from "zod";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { createHandlerMetrics, withColdStart } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";
import { linkedResources } from "./composition/resources.ts";
import { bearerToken, reviewerForToken, tokenSha256, tokensEqual } from "./http/bearer.ts";
import type { ReviewerCredential } from "./http/bearer.ts";

export { bearerToken, tokensEqual };
import { LINKS } from "../app/manifest.ts";

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

/**
 * The reviewers' authorizer over `getReviewers` (locally the reviewers file, or the one `reviewer` of
 * CLAIMS_REVIEWER_TOKEN): the bearer token must be one reviewer's; the answer's context names them
 * (`reviewer_id`, `reviewer_name`, and `reviewer_max_approval` when the file gives one), which the review routes
 * record as the decider and hold to their approval limit.
 */
export function createReviewerAuthorizerHandler(
  getReviewers: () => readonly ReviewerCredential[] | Promise<readonly ReviewerCredential[]>,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  const logger = options.logger ?? createLogger("claims-reviewer-authorizer");
  return withColdStart(
    async (
      event: APIGatewayRequestAuthorizerEventV2,
    ): Promise<APIGatewaySimpleAuthorizerWithContextResult<Record<string, string>>> => {
      const parsed = AuthorizerEventSchema.safeParse(event);
      if (!parsed.success) {
        logger.warn("not an authorizer event: denied");
        return { isAuthorized: false, context: {} };
      }
      const token = bearerToken(parsed.data.headers.authorization ?? parsed.data.identitySource?.[0]);
      const reviewer = token === undefined ? undefined : reviewerForToken(token, await getReviewers());
      logger.info("authorization decided", {
        routeKey: parsed.data.routeKey,
        isAuthorized: reviewer !== undefined,
        bearer: token !== undefined,
        ...(reviewer ? { reviewer: reviewer.id } : {}),
      });
      return reviewer
        ? {
            isAuthorized: true,
            context: {
              reviewer_id: reviewer.id,
              ...(reviewer.name ? { reviewer_name: reviewer.name } : {}),
              ...(reviewer.max_approval !== undefined ? { reviewer_max_approval: String(reviewer.max_approval) } : {}),
            },
          }
        : { isAuthorized: false, context: {} };
    },
    options.metrics ?? createHandlerMetrics("reviewerAuthorizer"),
  );
}

/** The one reviewer of a single reviewer token (CLAIMS_REVIEWER_TOKEN alone; the ReviewerToken secret): id `reviewer`. */
export function singleReviewer(token: string): ReviewerCredential[] {
  return [{ id: "reviewer", token_sha256: tokenSha256(token) }];
}

/** The deployed authorizer of the intake routes (infra/api.ts: IntakeToken): Resource.ApiToken. */
export const handler = createAuthorizerHandler(() => linkedResources().secret(LINKS.apiToken));

/**
 * The reviewer-token authorizer as a Lambda handler over Resource.ReviewerToken (app/manifest.ts `reviewerAuthorizer`, a
 * local-only function): AWS does not deploy it, its review routes use API Gateway's JWT authorizer (infra/reviewers.ts).
 */
export const reviewerHandler = createReviewerAuthorizerHandler(async () =>
  singleReviewer(await linkedResources().secret(LINKS.reviewerToken)),
);
