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
