// The HTTP API of SPEC §7.2 on API Gateway v2: one intake function serves every route, a Lambda
// authorizer checks the bearer token on all of them but /health, and the stage is throttled.
import { ROUTES } from "./facts.ts";
import type { RouteKey } from "./facts.ts";
import { functionArgs } from "./lambda.ts";
import { settings } from "./settings.ts";

/** The intake handler behind every route (one function, so one warm pool and one set of permissions). */
export const intakeApi = new sst.aws.Function(
  "IntakeApi",
  functionArgs("intakeApi"),
);

/** The HTTP API. No CORS: it is called by servers and operators' tools, not from browsers. */
export const api = new sst.aws.ApiGatewayV2("Api", {
  cors: false,
  accessLog: { retention: settings.logRetention },
  transform: {
    // Caps the whole stage well below the account's 10,000 rps, so a runaway client cannot run up LLM spend.
    stage: {
      defaultRouteSettings: {
        throttlingRateLimit: settings.api.rateLimit,
        throttlingBurstLimit: settings.api.burstLimit,
      },
    },
  },
});

/**
 * Bearer-token authorizer (simple responses). Requests without an Authorization header are refused by
 * API Gateway before the function runs; answers are cached per token for 5 minutes.
 */
export const authorizer = api.addAuthorizer({
  name: "BearerToken",
  lambda: {
    function: functionArgs("authorizer"),
    response: "simple",
    identitySources: ["$request.header.Authorization"],
    ttl: "300 seconds",
  },
});

const bearer = { lambda: authorizer.id };

// Every route of facts.ts, served by the one intake function; routes with auth "none" (health) are open.
for (const [key, route] of Object.entries(ROUTES) as [RouteKey, (typeof ROUTES)[RouteKey]][]) {
  api.route(key, intakeApi.arn, { auth: route.auth === "none" ? false : bearer });
}
