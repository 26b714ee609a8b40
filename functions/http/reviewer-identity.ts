// Who is deciding (docs/reviews.md): the reviewer the route's authorizer authenticated, read from the request —
// a Lambda authorizer's context (locally: the reviewers file's id and name) or the claims of a JWT authorizer
// (on AWS and in local OIDC mode: the token's `sub`, named by `name` or `email`). Only members of the
// `reviewers` group, or holders of the `claims/review` scope, may act as reviewers.
import * as z from "zod";
import type { ReviewerIdentity } from "../../core/kernel/review.ts";

/** The group whose members may decide reviews (Cognito's `cognito:groups`, or a `groups` claim). */
export const REVIEWERS_GROUP = "reviewers";
/** The OAuth scope that lets a token decide reviews (client credentials of another IdP). */
export const REVIEW_SCOPE = "claims/review";

const LambdaContextSchema = z.object({
  lambda: z.object({ reviewer_id: z.string().min(1), reviewer_name: z.string().min(1).optional() }),
});

const Claim = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);
const JwtContextSchema = z.object({
  jwt: z.object({
    claims: z.record(z.string(), Claim),
    scopes: z.array(z.string()).nullish(),
  }),
});

/**
 * A claim's values: API Gateway's JWT authorizer passes a list claim as a string like `[a b]` (or `a,b` / `a b`);
 * a verifier run locally may pass the list itself.
 */
function listClaim(value: z.infer<typeof Claim> | undefined): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  return String(value)
    .replace(/^\[|\]$/g, "")
    .split(/[\s,]+/)
    .filter((s) => s !== "");
}

/** The reviewer the authorizer authenticated, or why the request may not act as one. */
export function reviewerOf(
  authorizer: unknown,
): { ok: true; reviewer: ReviewerIdentity } | { ok: false; message: string } {
  const lambda = LambdaContextSchema.safeParse(authorizer);
  if (lambda.success) {
    const { reviewer_id: id, reviewer_name: name } = lambda.data.lambda;
    return { ok: true, reviewer: { id, ...(name ? { name } : {}) } };
  }
  const jwt = JwtContextSchema.safeParse(authorizer);
  if (!jwt.success) return { ok: false, message: "the request carries no reviewer identity" };
  const { claims, scopes } = jwt.data.jwt;
  const sub = typeof claims.sub === "string" ? claims.sub : undefined;
  if (!sub) return { ok: false, message: "the token has no sub claim: it names nobody" };
  const groups = [...listClaim(claims["cognito:groups"]), ...listClaim(claims.groups)];
  const granted = [...(scopes ?? []), ...listClaim(claims.scope)];
  if (!groups.includes(REVIEWERS_GROUP) && !granted.includes(REVIEW_SCOPE))
    return {
      ok: false,
      message: `the token's subject is not a reviewer: it needs the ${REVIEWERS_GROUP} group or the ${REVIEW_SCOPE} scope`,
    };
  const name = [claims.name, claims.email].find((v): v is string => typeof v === "string" && v.trim() !== "");
  return { ok: true, reviewer: { id: sub, ...(name ? { name } : {}) } };
}
