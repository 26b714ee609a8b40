// What replays of the same recorded events may share, when their caller asks (ReplayOptions.memo): each event's
// details as read (and their erased fields), the claim text read again by patterns, whether a claim's facts are plain,
// the canonical JSON of the recorded values replay compares. A caller replaying many edited copies of one audit
// (the fail-closed tests) reads each unchanged event once instead of once per copy; one `claims replay` has nothing
// to share and passes none. Every check replay makes is still made on every replay: only the reading is shared.
import type * as z from "zod";
import type { AuditEvent } from "../../integrity/index.ts";
import { plainTextExtraction } from "../../extraction/extraction.ts";
import type { ClaimExtractionOutput } from "../../claim/proposal-output.ts";
import { auditDetailsIssues } from "../audit-events.ts";
import { canonicalize } from "../../crew/index.ts";
import type { Claim } from "../../claim/claim.ts";
import { hasPlainFacts } from "../../agents/crew.ts";
import { ERASED, erasedPaths } from "../../privacy/sealing.ts";

/**
 * Reads shared between replays. Details are remembered by identity, so the events must not be changed in place
 * while the memo is in use: an edited event is a new object with new details (as `{ ...event, details }` makes).
 */
export interface ReplayMemo {
  /** Per details object, per event type: the details as read. */
  readonly details: WeakMap<object, Map<string, DetailsRead>>;
  /** Per received-at and claim text: the text read by patterns alone (undefined: they cannot read it alone). */
  readonly patterns: Map<string, ClaimExtractionOutput | undefined>;
  /** Per claim (its canonical JSON): whether its facts are plain (`hasPlainFacts`). */
  readonly plainFacts: Map<string, boolean>;
  /** Per recorded value compared (an event's details or a part of them): its canonical JSON. */
  readonly canonical: WeakMap<object, string>;
  /** Per details object: the erased fields in it (`erasedPaths`). */
  readonly erased: WeakMap<object, string[]>;
}

/** Details as read: parsed, or what is wrong with them. */
export type DetailsRead = { ok: true; data: unknown } | { ok: false; issues: string };

/** A memo for replays of the same recorded events (see ReplayMemo for what its caller promises). */
export function replayMemo(): ReplayMemo {
  return {
    details: new WeakMap(),
    patterns: new Map(),
    plainFacts: new Map(),
    canonical: new WeakMap(),
    erased: new WeakMap(),
  };
}

/** `details` read with `schema` (the schema of `type`): remembered in `memo` when there is one. */
export function readDetails(
  type: AuditEvent["event_type"],
  details: AuditEvent["details"],
  schema: z.ZodType,
  memo: ReplayMemo | undefined,
): DetailsRead {
  const byType = memo?.details.get(details);
  const known = byType?.get(type);
  if (known) return known;
  const parsed = schema.safeParse(details);
  const read: DetailsRead = parsed.success
    ? { ok: true, data: parsed.data }
    : { ok: false, issues: auditDetailsIssues(parsed.error) };
  if (memo) {
    if (byType) byType.set(type, read);
    else memo.details.set(details, new Map([[type, read]]));
  }
  return read;
}

/** `plainTextExtraction(text, receivedAt)`, remembered in `memo` when there is one (a pure function of two strings). */
export function patternsRead(
  text: string,
  receivedAt: string,
  memo: ReplayMemo | undefined,
): ClaimExtractionOutput | undefined {
  if (!memo) return plainTextExtraction(text, receivedAt);
  const key = `${receivedAt}\n${text}`;
  if (memo.patterns.has(key)) return memo.patterns.get(key);
  const read = plainTextExtraction(text, receivedAt);
  memo.patterns.set(key, read);
  return read;
}

/** `hasPlainFacts(claim)`, remembered in `memo` by the claim's content when there is one (a pure function of it). */
export function plainFacts(claim: Claim, memo: ReplayMemo | undefined): boolean {
  if (!memo) return hasPlainFacts(claim);
  let key: string;
  try {
    key = canonicalize(claim);
  } catch {
    return hasPlainFacts(claim);
  }
  const known = memo.plainFacts.get(key);
  if (known !== undefined) return known;
  const plain = hasPlainFacts(claim);
  memo.plainFacts.set(key, plain);
  return plain;
}

/** `canonicalize(value)`, remembered in `memo` by identity for an object when there is one. */
export function canonicalOf(value: unknown, memo: ReplayMemo | undefined): string {
  if (!memo || value === null || typeof value !== "object") return canonicalize(value);
  let text = memo.canonical.get(value);
  if (text === undefined) {
    text = canonicalize(value);
    memo.canonical.set(value, text);
  }
  return text;
}

/** The erased fields of `details` (`erasedPaths`), walked only where a value reads ERASED; remembered in `memo`. */
export function erasedIn(details: AuditEvent["details"], memo: ReplayMemo | undefined): string[] {
  const known = memo?.erased.get(details);
  if (known) return known;
  const paths = holdsErased(details) ? erasedPaths(details) : [];
  memo?.erased.set(details, paths);
  return paths;
}

/**
 * Whether any value in `value` is ERASED: only then can `erasedPaths` find an erased field (it builds every path it
 * walks; most audits have nothing erased).
 */
export function holdsErased(value: unknown): boolean {
  if (value === ERASED) return true;
  if (value === null || typeof value !== "object") return false;
  for (const v of Object.values(value)) if (holdsErased(v)) return true;
  return false;
}
