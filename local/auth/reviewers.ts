// The reviewers file (docs/reviews.md): one credential per person, `reviewers: [{ id, name?, token_sha256 }]`, only
// the SHA-256 of each token stored. Read whole or refused whole: a duplicate id or hash, a malformed hash, an
// unknown key or bad YAML is an error naming its line, never a half-loaded list. Owner-only, like the data directory.
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { stringify } from "yaml";
import * as z from "zod";
import { SourceFileError } from "../../core/claim/errors.ts";
import { oneLineText } from "../../core/claim/claim.ts";
import { parseCents } from "../../core/kernel/money.ts";
import { parseYamlSource, validateYaml } from "../../core/claim/yaml-source.ts";
import type { SourceIssue } from "../../core/claim/yaml-source.ts";
import type { ReviewerCredential } from "../../functions/http/bearer.ts";
import { ReviewersFileError } from "./errors.ts";

/** What a reviewer id may hold: it names the person in the audit and the events. */
export const REVIEWER_ID = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

const ReviewerSchema = z
  .object({
    id: z.string().regex(REVIEWER_ID, "an id is 1-128 letters, digits and . _ @ + - (starting with a letter or digit)"),
    name: oneLineText().trim().min(1).max(128).optional(),
    token_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "token_sha256 is the SHA-256 of the token: 64 lower-case hex digits"),
    /** The most this reviewer approves alone, in EUR (docs/reviews.md#reviewer-limits); absent: no limit. */
    max_approval: z
      .number()
      .positive("max_approval is a positive number of EUR")
      .refine((n) => parseCents(n).ok, { message: "max_approval is an amount in whole cents" })
      .optional(),
  })
  .strict();

const ReviewersFileSchema = z.object({ reviewers: z.array(ReviewerSchema).nullable().default([]) }).strict();

/** Parses a reviewers file's text; throws SourceFileError (every problem, with its line) for anything but a clean list. */
export function parseReviewers(text: string, file: string): ReviewerCredential[] {
  const source = parseYamlSource(text, file);
  if (source.value === null || source.value === undefined) return [];
  const reviewers =
    validateYaml(source, ReviewersFileSchema, (path) => {
      const row = (source.value as { reviewers?: { id?: unknown }[] }).reviewers?.[path[1] as number]?.id;
      return path[0] === "reviewers" && typeof row === "string" ? row : undefined;
    }).reviewers ?? [];
  const issues: SourceIssue[] = [];
  const seen = { id: new Map<string, number>(), token_sha256: new Map<string, number>() };
  reviewers.forEach((r, i) => {
    for (const key of ["id", "token_sha256"] as const) {
      const first = seen[key].get(r[key]);
      if (first !== undefined)
        issues.push({
          file,
          line: source.lineOf(["reviewers", i, key]),
          row: r.id,
          field: `reviewers[${i}].${key}`,
          message:
            key === "id"
              ? `reviewer id ${r.id} is listed twice (first at reviewers[${first}])`
              : `this token hash is reviewers[${first}]'s too: every reviewer has a token of their own`,
        });
      else seen[key].set(r[key], i);
    }
  });
  if (issues.length > 0) throw new SourceFileError(file, issues);
  return reviewers.map((r) => ({
    id: r.id,
    ...(r.name ? { name: r.name } : {}),
    token_sha256: r.token_sha256,
    ...(r.max_approval !== undefined ? { max_approval: r.max_approval } : {}),
  }));
}

/**
 * Reads the reviewers file at `path` (absent: none yet, when `missingOk`), tightening it to owner-only first (it
 * is refused when that is not possible). Throws ReviewersFileError or SourceFileError.
 */
export function loadReviewers(path: string, opts: { missingOk?: boolean } = {}): ReviewerCredential[] {
  if (!existsSync(path)) {
    if (opts.missingOk) return [];
    throw new ReviewersFileError(
      `reviewers file ${path} does not exist (claims reviewers add ID --reviewers ${path} creates it)`,
    );
  }
  const stat = lstatSync(path);
  if (!stat.isFile()) throw new ReviewersFileError(`reviewers file ${path} is not a regular file`);
  if ((stat.mode & 0o077) !== 0) {
    try {
      chmodSync(path, 0o600);
    } catch (error) {
      throw new ReviewersFileError(
        `reviewers file ${path} is open to other users (mode ${(stat.mode & 0o777).toString(8)}) and cannot be made owner-only: run chmod 600 ${path}`,
        error,
      );
    }
  }
  return parseReviewers(readFileSync(path, "utf8"), path);
}

/** Writes the reviewers to `path` owner-only (0600), atomically: a crash leaves the old file or the new one. */
export function writeReviewers(path: string, reviewers: readonly ReviewerCredential[]): void {
  const text = `# Claims Crew reviewers: one credential per person; only the SHA-256 of each token is kept.\n# Written by \`claims reviewers add|remove\`.\n${stringify({ reviewers: reviewers.map((r) => ({ id: r.id, ...(r.name ? { name: r.name } : {}), token_sha256: r.token_sha256, ...(r.max_approval !== undefined ? { max_approval: r.max_approval } : {}) })) })}`;
  const temp = join(dirname(path), `.${process.pid}.reviewers.tmp`);
  const fd = openSync(temp, "w", 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

/** How often, at most, a running server looks at the reviewers file again (a removed reviewer is refused within it). */
export const REVIEWERS_RECHECK_MS = 1_000;

/**
 * The reviewers of the file at `path` as they are now, for a running server: read at most every `recheckMs` (on
 * use; the file's size, modification time and inode say whether it changed), so `claims reviewers add|remove` —
 * or an edit — takes effect without a restart. A file that cannot be read or parsed refuses every reviewer until it
 * can (fail closed: a reviewer removed by a half-saved edit stays removed) and `onProblem` hears why, once per
 * change. `now` is injected for tests.
 */
export function watchReviewers(
  path: string,
  options: {
    recheckMs?: number;
    now?: () => number;
    onProblem?: (message: string) => void;
    onReload?: (reviewers: readonly ReviewerCredential[]) => void;
  } = {},
): () => readonly ReviewerCredential[] {
  const recheckMs = options.recheckMs ?? REVIEWERS_RECHECK_MS;
  const now = options.now ?? Date.now;
  let current: readonly ReviewerCredential[] = [];
  let seen: string | undefined;
  let checkedAt = Number.NEGATIVE_INFINITY;
  const look = () => {
    let signature: string;
    try {
      const stat = statSync(path);
      signature = `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.mode}`;
    } catch {
      signature = "absent";
    }
    if (signature === seen) return;
    seen = signature;
    try {
      current = loadReviewers(path);
      options.onReload?.(current);
    } catch (error) {
      current = [];
      options.onProblem?.(
        `reviewers file ${path} cannot be used, so every reviewer is refused until it can: ${(error as Error).message}`,
      );
    }
  };
  return () => {
    const at = now();
    if (at - checkedAt >= recheckMs) {
      checkedAt = at;
      look();
    }
    return current;
  };
}
