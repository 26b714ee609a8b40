// The bearer token of a request and its constant-time comparison: the authorizers' check, and the report
// routes' own (they answer a browser without a token with the page that asks for it).
import { createHash, timingSafeEqual } from "node:crypto";

/** Compares two tokens in time independent of where they differ (and of their lengths: both are hashed first). */
export function tokensEqual(presented: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(presented), digest(expected)) && expected.length > 0;
}

/** The token of an `Authorization: Bearer <token>` header value, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
}

/** A named reviewer: the id decisions are recorded under, a display name, and the SHA-256 (hex) of their token. */
export interface ReviewerCredential {
  readonly id: string;
  readonly name?: string | undefined;
  readonly token_sha256: string;
  /** The most they approve alone, in EUR (the reviewers file's `max_approval`); absent: no limit. */
  readonly max_approval?: number | undefined;
}

/** The SHA-256 (lower-case hex) a reviewers file stores for a token. */
export function tokenSha256(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The reviewer whose token `presented` is, compared in constant time against every stored hash; undefined for none. */
export function reviewerForToken(
  presented: string,
  reviewers: readonly ReviewerCredential[],
): ReviewerCredential | undefined {
  const digest = createHash("sha256").update(presented, "utf8").digest();
  let found: ReviewerCredential | undefined;
  for (const r of reviewers) {
    const stored = Buffer.from(r.token_sha256, "hex");
    if (stored.length === digest.length && timingSafeEqual(stored, digest)) found ??= r;
  }
  return found;
}
