// The shape of a route authorizer the local HTTP front runs (local/http-front.ts) and local/auth builds.
import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerResult } from "aws-lambda";

/**
 * A route's authorizer, as API Gateway runs it: a Lambda authorizer's simple answer (its `context` reaches the
 * function as `requestContext.authorizer.lambda`), or a JWT authorizer's (its `jwt` claims and scopes reach it as
 * `requestContext.authorizer.jwt`; a refused JWT is 401, as API Gateway answers).
 */
export type AuthorizerFn = (event: APIGatewayRequestAuthorizerEventV2) => Promise<
  APIGatewaySimpleAuthorizerResult & {
    context?: Record<string, unknown>;
    jwt?: { claims: Record<string, unknown>; scopes: string[] | null };
    kind?: "jwt";
  }
>;
