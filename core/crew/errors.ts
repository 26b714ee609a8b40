// Thrown errors of the crew engine: bad wiring and broken invariants, never business outcomes.
// A crew that cannot produce an output *returns* `crew.failed`; these are for callers that
// hand the engine something a correct caller never produces.
import { ClaimsError } from "../errors.ts";

import type { CrewLintIssue } from "./lint.ts";

/** Stable codes of the errors this module throws. */
export type CrewErrorCode =
  | "CREW_SHAPE_INVALID"
  | "INVALID_CREW_EVENT"
  | "INVALID_CREW_INPUT"
  | "UNKNOWN_CREW"
  | "SNAPSHOT_VERSION"
  | "SNAPSHOT_MISMATCH"
  | "SESSION_STATE"
  | "HOOK_FAILED"
  | "INVALID_CLOCK"
  | "NOT_CANONICAL_JSON"
  | "UNKNOWN_VOTING_STRATEGY";

/** A schema issue as zod reports it, reduced to what a caller can print. */
export type CrewSchemaIssue = { path: string; message: string; code: string };

/** Base class of every error thrown by `core/crew`; `code` is stable, `cause` is kept. */
export class CrewError extends ClaimsError<CrewErrorCode> {}

/** A crew shape or count document that fails its schema or the linter; `issues` lists every problem. */
export class CrewShapeError extends CrewError {
  readonly issues: readonly CrewLintIssue[];
  constructor(crewName: string, issues: readonly CrewLintIssue[]) {
    const lines = issues.map((i) => `  - [${i.code}] ${i.path || "(root)"}: ${i.message}`).join("\n");
    super(
      "CREW_SHAPE_INVALID",
      `crew ${crewName} is not a valid crew (${issues.length} issue${issues.length === 1 ? "" : "s"}):\n${lines}`,
    );
    this.issues = issues;
  }
}

/** An inbound event that fails its zod schema; `issues` are zod's issues with readable paths. */
export class InvalidCrewEventError extends CrewError {
  readonly issues: readonly CrewSchemaIssue[];
  constructor(eventType: string, issues: readonly CrewSchemaIssue[], options?: { cause?: unknown }) {
    const lines = issues.map((i) => `${i.path || "(root)"}: ${i.message}`).join("; ");
    super("INVALID_CREW_EVENT", `invalid inbound crew event (type ${JSON.stringify(eventType)}): ${lines}`, options);
    this.issues = issues;
  }
}

/** A root input or task handed to `start` that is not a JSON value. */
export class InvalidCrewInputError extends CrewError {
  constructor(message: string) {
    super("INVALID_CREW_INPUT", message);
  }
}

/** An event addressed to a crew id that is neither this session nor one of its (possible) inner crews. */
export class UnknownCrewError extends CrewError {
  readonly crewId: string;
  readonly expectedCrewId: string;
  constructor(crewId: string, expectedCrewId: string) {
    super(
      "UNKNOWN_CREW",
      `event for crew ${JSON.stringify(crewId)} was delivered to the session of crew ${JSON.stringify(expectedCrewId)}; load the session of the crew the event names`,
    );
    this.crewId = crewId;
    this.expectedCrewId = expectedCrewId;
  }
}

/** A snapshot written by another snapshot schema version; it names both versions. */
export class SnapshotVersionError extends CrewError {
  readonly found: unknown;
  readonly expected: string;
  constructor(found: unknown, expected: string) {
    super(
      "SNAPSHOT_VERSION",
      `snapshot has schema_version ${JSON.stringify(found)}, but this engine reads schema_version ${JSON.stringify(expected)}`,
    );
    this.found = found;
    this.expected = expected;
  }
}

/** A snapshot that does not fit the graph it is resumed with (other crew, other counts, corrupt state). */
export class SnapshotMismatchError extends CrewError {
  constructor(message: string) {
    super("SNAPSHOT_MISMATCH", message);
  }
}

/** A session method called in a state where it makes no sense (e.g. `start` twice, `deliver` before `start`). */
export class SessionStateError extends CrewError {
  constructor(message: string) {
    super("SESSION_STATE", message);
  }
}

/** A hook threw; the session's state after this is undefined, so resume from the last saved snapshot. */
export class HookError extends CrewError {
  readonly hook: string;
  constructor(hook: string, cause: unknown) {
    super("HOOK_FAILED", `hook ${hook} threw: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.hook = hook;
  }
}

/** A clock handed a time that is not a finite number of milliseconds, or asked to run backwards. */
export class InvalidClockError extends CrewError {
  constructor(message: string) {
    super("INVALID_CLOCK", message);
  }
}

/** A value `canonicalize` cannot write: circular, a non-finite number, a function, a symbol or a bigint. */
export class CanonicalJsonError extends CrewError {
  constructor(message: string) {
    super("NOT_CANONICAL_JSON", message);
  }
}

/** `resolveVotes` called with a strategy it does not know. */
export class UnknownVotingStrategyError extends CrewError {
  readonly strategy: unknown;
  constructor(strategy: unknown, known: readonly string[]) {
    super(
      "UNKNOWN_VOTING_STRATEGY",
      `unknown voting strategy ${JSON.stringify(strategy) ?? String(strategy)}; use one of ${known.join(", ")}`,
    );
    this.strategy = strategy;
  }
}
