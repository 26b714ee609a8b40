// The HTTP API on API Gateway v2: every route of app/manifest.ts, served by its function (IntakeApi for claims
// and reports, ReviewApi for reviews), each behind the authorizer of its credential (the intake token; a
// reviewer's JWT of the reviewers' OpenID Connect issuer, infra/reviewers.ts; /health is open), every route
// throttled and POST /claims tighter. IntakeApi and its authorizer keep reserved concurrency (app/manifest.ts), so
// queue consumers can never take it from them.
import { accessLogFormat } from "../app/access-log.ts";
import { AUTHORIZERS, ROUTES, SUBMIT_ROUTE, servedRouteKeys } from "../app/manifest.ts";
import type { RouteAuth, RouteKey } from "../app/manifest.ts";
import { functionArgs } from "./lambda.ts";
import { paymentWebhook } from "./payments.ts";
import { reviewerJwt } from "./reviewers.ts";
import { settings } from "./settings.ts";

/** The intake handler behind the claim and report routes (one function: one warm pool, one set of permissions). */
export const intakeApi = new sst.aws.Function("IntakeApi", functionArgs("intakeApi"));

/** The reviewer handler behind the review routes: the only HTTP function linked to the bus (approvals publish). */
export const reviewApi = new sst.aws.Function("ReviewApi", functionArgs("reviewApi"));

/** The function of each route; the payment webhook exists only with a PAYMENT_PROVIDER that has a webhook (infra/payments.ts). */
const HANDLERS = { intakeApi, reviewApi, paymentWebhook } as const;

/**
 * Resolved with the routes' API Gateway resources once they are declared: the stage's route settings name POST /claims,
 * which must exist first. Each is the route component's `nodes.route`, not the component: SST creates the Route inside
 * an `apply`, so depending on the component alone waits only for the children registered by then (a race that a deploy
 * and check:infra both lose now and then).
 */
let routesDeclared: (routes: unknown[]) => void = () => undefined;
const declaredRoutes = new Promise<unknown[]>((resolve) => {
  routesDeclared = resolve;
});

/**
 * The stage's throttles. HTTP APIs throttle per route: `defaultRouteSettings` is each route's limit (the stage
 * as a whole can take up to routes x that, within the account's 10,000 rps); `routeSettings` gives POST /claims
 * its own, tighter one.
 */
const THROTTLE = {
  defaultRouteSettings: {
    throttlingRateLimit: settings.api.rateLimit,
    throttlingBurstLimit: settings.api.burstLimit,
  },
  routeSettings: [
    {
      routeKey: SUBMIT_ROUTE,
      throttlingRateLimit: settings.api.submitRateLimit,
      throttlingBurstLimit: settings.api.submitBurstLimit,
    },
  ],
};

/**
 * The HTTP API. No CORS: it is called by servers and operators' tools; the review page is served from the API itself.
 * The stage writes its access log to the log group SST makes (kept `settings.logRetention`) in our line
 * (app/access-log.ts) instead of SST's: SST's destination is kept, its format replaced.
 */
export const api = new sst.aws.ApiGatewayV2("Api", {
  cors: false,
  accessLog: { retention: settings.logRetention },
  transform: {
    stage: (
      args: { defaultRouteSettings?: unknown; routeSettings?: unknown; accessLogSettings?: unknown },
      opts: { dependsOn?: unknown },
    ) => {
      Object.assign(args, THROTTLE);
      args.accessLogSettings = { ...(args.accessLogSettings as object | undefined), format: accessLogFormat() };
      opts.dependsOn = declaredRoutes;
      return undefined;
    },
  },
});

/**
 * One authorizer per kind of credential. The intake token: a Lambda authorizer against the ApiToken secret (simple
 * responses, cached 5 minutes per token). Reviewers: API Gateway's JWT authorizer against the reviewers' issuer
 * and audiences (signature from the issuer's JWKS, `iss`, `aud` or an access token's `client_id`, expiry); it
 * passes the token's claims to the review function, which records `sub` and requires the `reviewers` group or
 * the `claims/review` scope. The intake token is no JWT of that issuer, and a reviewer's JWT is not the intake
 * token: neither opens the other's routes. Requests without an Authorization header are refused before any check.
 */
const authorizers = {
  intake: api.addAuthorizer({
    name: "IntakeToken",
    lambda: {
      function: functionArgs(AUTHORIZERS.intake),
      response: "simple",
      identitySources: ["$request.header.Authorization"],
      ttl: "300 seconds",
    },
  }),
  reviewer: api.addAuthorizer({
    name: "Reviewers",
    jwt: {
      issuer: reviewerJwt.issuer,
      audiences: reviewerJwt.audiences,
      identitySource: "$request.header.Authorization",
    },
  }),
} satisfies Record<Exclude<RouteAuth, "none">, unknown>;

// The routes served with this stage's payment provider (app/manifest.ts servedRouteKeys): every route but the
// webhooks of the other providers, and no webhook at all without a provider.
routesDeclared(
  servedRouteKeys(settings.paymentProvider)
    .map((key): [RouteKey, (typeof ROUTES)[RouteKey]] => [key, ROUTES[key]])
    .map(([key, route]) =>
      api.route(key, HANDLERS[route.fn]!.arn, {
        // A tokenPage route checks the token in its function (a browser without one gets the page that asks for it).
        // No route scopes: a Cognito ID token carries none; the review function checks the group or the scope.
        auth:
          route.auth === "none" || "tokenPage" in route
            ? false
            : route.auth === "reviewer"
              ? { jwt: { authorizer: authorizers.reviewer.id } }
              : { lambda: authorizers.intake.id },
      }),
    )
    .map((route) => route.nodes.route),
);
