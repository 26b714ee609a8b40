// Who is deciding (docs/reviews.md): the reviewer the route's authorizer authenticated, read from the request —
// a Lambda authorizer's context (locally: the reviewers file's id and name) or the claims of a JWT authorizer
// (on AWS and in local OIDC mode: the token's `sub`, named by `name` or `email`). Only members of the
// `reviewers` group, or holders of the `claims/review` scope, may act as reviewers. A reviewer's approval limit comes
// with the identity: the reviewers file's `max_approval`, or a `claims/approve:N` group or scope (or the
// `claims_max_approval` claim) of the token.
import * as z from "zod";
import type { ReviewerIdentity } from "../../core/kernel/review.ts";

/** The group whose members may decide reviews (Cognito's `cognito:groups`, or a `groups` claim). */
export const REVIEWERS_GROUP = "reviewers";
/** The OAuth scope that lets a token decide reviews (client credentials of another IdP). */
export const REVIEW_SCOPE = "claims/review";

const LambdaContextSchema = z.object({
  lambda: z.object({
    reviewer_id: z.string().min(1),
    reviewer_name: z.string().min(1).optional(),
    reviewer_max_approval: z.string().optional(),
  }),
});

/** The group or scope that sets a reviewer's approval limit on AWS: `claims/approve:500` (EUR). */
export const APPROVAL_LIMIT_PREFIX = "claims/approve:";
/** The token claim that sets it too (a number of EUR). */
export const APPROVAL_LIMIT_CLAIM = "claims_max_approval";

/** A positive EUR amount in whole cents from text, or undefined. */
function eurAmount(raw: string | number | boolean | undefined): number | undefined {
  if (raw === undefined || typeof raw === "boolean") return undefined;
  const text = String(raw).trim();
  if (!/^\d+(\.\d{1,2})?$/.test(text)) return undefined;
  const n = Number(text);
  return n > 0 && Number.isFinite(n) ? n : undefined;
}

/**
 * A JWT reviewer's approval limit: the highest `claims/approve:N` among their groups and scopes, and the
 * `claims_max_approval` claim; undefined when none is given (no limit of their own). A malformed one is ignored.
 */
function approvalLimitOf(grants: readonly string[], claim: string | number | boolean | undefined): number | undefined {
  const limits = [
    ...grants
      .filter((g) => g.startsWith(APPROVAL_LIMIT_PREFIX))
      .map((g) => eurAmount(g.slice(APPROVAL_LIMIT_PREFIX.length))),
    eurAmount(claim),
  ].filter((n): n is number => n !== undefined);
  return limits.length > 0 ? Math.max(...limits) : undefined;
}

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
    const { reviewer_id: id, reviewer_name: name, reviewer_max_approval: max } = lambda.data.lambda;
    const limit = eurAmount(max);
    return {
      ok: true,
      reviewer: { id, ...(name ? { name } : {}), ...(limit !== undefined ? { maxApprovalEur: limit } : {}) },
    };
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
  const rawLimit = claims[APPROVAL_LIMIT_CLAIM];
  const limit = approvalLimitOf([...groups, ...granted], Array.isArray(rawLimit) ? undefined : rawLimit);
  return {
    ok: true,
    reviewer: { id: sub, ...(name ? { name } : {}), ...(limit !== undefined ? { maxApprovalEur: limit } : {}) },
  };
}
