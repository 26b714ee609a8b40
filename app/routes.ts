// The HTTP API's routes, who may call each, and the authorizers: infra/api.ts deploys them, the local HTTP front
// serves them, functions/http/ handles them and the OpenAPI description documents them. The payment providers'
// webhook routes come from their declarations (app/payment-providers/), each served only with its provider.
import type { FunctionKey } from "./functions.ts";
import { PAYMENT_PROVIDERS } from "./payment-provider.ts";
import type { PaymentProviderName, WebhookProvider } from "./payment-provider.ts";

/**
 * Who may call a route: the intake token (submitting and reading claims), a reviewer's credential (deciding
 * reviews: locally a reviewer token, on AWS a JWT of the reviewers' OpenID Connect issuer), or nobody checks
 * (health). They are separate credentials: neither opens the other's routes.
 */
export type RouteAuth = "intake" | "reviewer" | "none";

/** The authorizer function that checks each kind of token. */
export const AUTHORIZERS = { intake: "authorizer", reviewer: "reviewerAuthorizer" } as const satisfies Record<
  Exclude<RouteAuth, "none">,
  FunctionKey
>;

/** One HTTP route, the function that serves it and who may call it. */
export interface RouteFact {
  readonly method: "GET" | "POST";
  readonly path: `/${string}`;
  readonly auth: RouteAuth;
  readonly fn: "intakeApi" | "reviewApi" | "paymentWebhook";
  /** A payment provider's webhook: served only when it is the configured provider (PAYMENT_PROVIDER). */
  readonly provider?: PaymentProviderName;
  /**
   * API Gateway lets the route through and its function checks the token itself (functions/http/intake-routes.ts
   * withIntakeToken): a browser without a token gets the page that asks for it; any other request without one, 401.
   */
  readonly tokenPage?: true;
}

/**
 * The route with a throttle of its own, below the per-route default: each accepted claim starts LLM calls and
 * writes, so submissions get the tightest limit (CLAIMS_API_SUBMIT_RATE_LIMIT).
 */
export const SUBMIT_ROUTE = "POST /claims" as const;

/** A webhook route of each provider that has one: `POST <path>`, open (its signature is its credential), to paymentWebhook. */
type WebhookRoutes = {
  readonly [P in WebhookProvider as `POST ${P["webhook"]["path"]}`]: {
    readonly method: "POST";
    readonly path: P["webhook"]["path"];
    readonly auth: "none";
    readonly fn: "paymentWebhook";
    readonly provider: P["name"];
  };
};

/** The payment providers' webhook routes (no bearer token: the function verifies the provider's signature with its secret). */
export const WEBHOOK_ROUTES = Object.fromEntries(
  PAYMENT_PROVIDERS.flatMap((p) =>
    "webhook" in p
      ? [
          [
            `POST ${p.webhook.path}`,
            { method: "POST", path: p.webhook.path, auth: "none", fn: "paymentWebhook", provider: p.name },
          ],
        ]
      : [],
  ),
) as WebhookRoutes;

/** The HTTP API's routes, keyed by API Gateway route key. */
export const ROUTES = {
  "POST /claims": { method: "POST", path: "/claims", auth: "intake", fn: "intakeApi" },
  "GET /claims/{id}": { method: "GET", path: "/claims/{id}", auth: "intake", fn: "intakeApi" },
  "GET /claims": { method: "GET", path: "/claims", auth: "intake", fn: "intakeApi" },
  "GET /reports/{simulation_id}": {
    method: "GET",
    path: "/reports/{simulation_id}",
    auth: "intake",
    fn: "intakeApi",
    tokenPage: true,
  },
  // The live view of claims sent without a simulation_id.
  "GET /reports": { method: "GET", path: "/reports", auth: "intake", fn: "intakeApi", tokenPage: true },
  "GET /reviews": { method: "GET", path: "/reviews", auth: "reviewer", fn: "reviewApi" },
  "POST /claims/{id}/review": { method: "POST", path: "/claims/{id}/review", auth: "reviewer", fn: "reviewApi" },
  // The desk: a reviewer takes a review (a lease in their name), so two people do not work the same claim.
  "POST /claims/{id}/review/take": {
    method: "POST",
    path: "/claims/{id}/review/take",
    auth: "reviewer",
    fn: "reviewApi",
  },
  // A shop or warehouse reports a return's progress (docs/returns.md), with the intake token. Served by reviewApi,
  // which holds what a return's outcome writes (the claim, the ledger's release, a review, the bus) and the policy;
  // the intake function's grant stays the narrow one of submissions.
  "POST /claims/{id}/return-events": {
    method: "POST",
    path: "/claims/{id}/return-events",
    auth: "intake",
    fn: "reviewApi",
  },
  // The reviewers' page: constant HTML that holds no secret (it asks for the reviewer token and keeps it in the tab).
  "GET /review": { method: "GET", path: "/review", auth: "none", fn: "reviewApi" },
  // Open, for load balancers and uptime checks; it reveals nothing.
  "GET /health": { method: "GET", path: "/health", auth: "none", fn: "intakeApi" },
  // The payment providers' webhooks (Stripe's: POST /webhooks/stripe).
  ...WEBHOOK_ROUTES,
  // Open: the OpenAPI 3.1 description of these routes (functions/openapi.json), generated from the handlers' schemas.
  "GET /openapi.json": { method: "GET", path: "/openapi.json", auth: "none", fn: "intakeApi" },
} as const satisfies Record<string, RouteFact>;

/** An API Gateway route key of the app. */
export type RouteKey = keyof typeof ROUTES;

/**
 * The routes served with `paymentProvider` (PAYMENT_PROVIDER; undefined: none): every route but the webhooks of
 * the other providers. infra/api.ts deploys exactly these; the local HTTP front answers the others 404.
 */
export function servedRouteKeys(paymentProvider: PaymentProviderName | undefined): RouteKey[] {
  return (Object.keys(ROUTES) as RouteKey[]).filter((key) => {
    const route: RouteFact = ROUTES[key];
    return route.provider === undefined || route.provider === paymentProvider;
  });
}

/** The physical name of a stage's reviewer user pool (infra/reviewers.ts; `claims teardown` finds it by it). */
export function reviewerPoolName(stage: string): string {
  return `claims-crew-${stage}-reviewers`;
}
