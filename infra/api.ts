// The HTTP API of SPEC §7.2 on API Gateway v2: one intake function serves every route, a Lambda
// authorizer checks the bearer token on all of them but /health, and the stage is throttled.
import { functionArgs } from "./lambda.ts";
import { crewEventsQueue, extractionQueue } from "./queues.ts";
import { apiToken } from "./secrets.ts";
import { settings } from "./settings.ts";
import { table } from "./storage.ts";

/** The intake handler behind every route (one function, so one warm pool and one set of permissions). */
export const intakeApi = new sst.aws.Function(
  "IntakeApi",
  functionArgs("intakeApi", { link: [table, extractionQueue, crewEventsQueue] }),
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
    function: functionArgs("authorizer", { link: [apiToken] }),
    response: "simple",
    identitySources: ["$request.header.Authorization"],
    ttl: "300 seconds",
  },
});

const bearer = { lambda: authorizer.id };

api.route("POST /claims", intakeApi.arn, { auth: bearer });
api.route("GET /claims/{id}", intakeApi.arn, { auth: bearer });
api.route("GET /reports/{simulation_id}", intakeApi.arn, { auth: bearer });
// Open, for load balancers and uptime checks; it reveals nothing.
api.route("GET /health", intakeApi.arn, { auth: false });
