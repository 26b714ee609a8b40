// Reviewers from your own OpenID Connect issuer, locally (docs/reviews.md): the review routes verify the bearer
// JWT the way API Gateway's JWT authorizer does on AWS — the issuer's signing keys from its discovery document,
// `iss` equal to the issuer, `aud` (or an access token's `client_id`) one of the audiences, not expired nor
// used before `nbf` — and hand the review function the token's claims and scopes as API Gateway does
// (`requestContext.authorizer.jwt`; a list claim as a string like `[a b]`).
import type { APIGatewayRequestAuthorizerEventV2 } from "aws-lambda";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { JWTPayload } from "jose";
import { bearerToken } from "../../functions/http/bearer.ts";
import type { AuthorizerFn } from "./authorizer.ts";

/** The issuer and the audiences a reviewer's JWT must carry (CLAIMS_REVIEWER_OIDC_ISSUER / _AUDIENCE). */
export interface OidcSettings {
  readonly issuer: string;
  readonly audience: readonly string[];
}

/** The claims as API Gateway's JWT authorizer passes them: strings, a list as `[a b]`. */
function gatewayClaims(payload: JWTPayload): Record<string, string> {
  return Object.fromEntries(
    Object.entries(payload).map(([k, v]) => [
      k,
      Array.isArray(v) ? `[${v.join(" ")}]` : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v),
    ]),
  );
}

/** Whether the token is for one of `audience`: its `aud` (string or list), else an access token's `client_id`. */
function forAudience(payload: JWTPayload, audience: readonly string[]): boolean {
  const aud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (aud.length > 0) return aud.some((a) => audience.includes(a));
  const clientId = (payload as { client_id?: unknown }).client_id;
  return typeof clientId === "string" && audience.includes(clientId);
}

/** The reviewers' authorizer of OIDC mode: the JWT verified against `settings`, its claims passed on. */
export function createJwtAuthorizer(settings: OidcSettings): AuthorizerFn {
  const issuer = settings.issuer.replace(/\/+$/, "");
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  const jwks = async () => {
    if (keys) return keys;
    const response = await fetch(`${issuer}/.well-known/openid-configuration`);
    if (!response.ok) throw new Error(`${issuer}: discovery answered ${response.status}`);
    const discovery = (await response.json()) as { jwks_uri?: unknown; issuer?: unknown };
    if (typeof discovery.jwks_uri !== "string") throw new Error(`${issuer}: the discovery document has no jwks_uri`);
    keys = createRemoteJWKSet(new URL(discovery.jwks_uri));
    return keys;
  };
  return async (event: APIGatewayRequestAuthorizerEventV2) => {
    const token = bearerToken(event.headers?.authorization ?? event.identitySource?.[0]);
    if (token === undefined) return { isAuthorized: false, kind: "jwt" as const };
    try {
      const { payload } = await jwtVerify(token, await jwks(), {
        issuer: [issuer, `${issuer}/`],
        algorithms: ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"],
      });
      if (!forAudience(payload, settings.audience)) return { isAuthorized: false, kind: "jwt" as const };
      const scopes = typeof payload.scope === "string" ? payload.scope.split(" ").filter((s) => s !== "") : null;
      return { isAuthorized: true, kind: "jwt" as const, jwt: { claims: gatewayClaims(payload), scopes } };
    } catch {
      return { isAuthorized: false, kind: "jwt" as const };
    }
  };
}
