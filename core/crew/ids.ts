import { hashHex } from "./hash.ts";

/** Length of a correlation id: 24 hex characters (96 bits of SHA-256). */
export const CORRELATION_ID_LENGTH = 24;

// A bounded memo of a pure function: a warm process resuming the same crew event after event
// recomputes no hashes. Cleared wholesale when full; results never depend on it.
const MEMO_LIMIT = 8192;
const memo = new Map<string, string>();

/** The deterministic id of one step: the first 24 hex chars of SHA-256 over the canonical JSON of `[crewId, phaseIndex, agentId, attempt]`. */
export function correlationId(crewId: string, phaseIndex: number, agentId: string, attempt: number): string {
  if (!Number.isFinite(phaseIndex) || !Number.isFinite(attempt)) {
    throw new TypeError(
      `correlationId: phaseIndex and attempt must be finite numbers, got ${phaseIndex} and ${attempt}`,
    );
  }
  // Memo key: one-to-one with the parts (the length prefix fixes where crewId ends; the two numbers
  // after the last separators cannot contain one) and cheaper to build than the JSON that is hashed.
  const key = `${crewId.length}:${crewId}${agentId}|${phaseIndex}|${attempt}`;
  let id = memo.get(key);
  if (id === undefined) {
    // For two strings and two finite numbers JSON.stringify is exactly canonicalize(), only native.
    id = hashHex(JSON.stringify([crewId, phaseIndex, agentId, attempt])).slice(0, CORRELATION_ID_LENGTH);
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(key, id);
  }
  return id;
}

/** The step id used for a fixer agent working on behalf of a failed agent's slot: `fixer#0@merc#2`. */
export function fixerStepAgentId(fixerAgentId: string, failedAgentId: string): string {
  return `${fixerAgentId}@${failedAgentId}`;
}

/** The crew id of the inner crew an agent of a nested-crew role runs: `${crewId}/${agentId}`. */
export function innerCrewId(crewId: string, agentId: string): string {
  return `${crewId}/${agentId}`;
}
