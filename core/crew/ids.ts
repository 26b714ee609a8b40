import { canonicalize } from "./canonical.ts";
import { hashHex } from "./hash.ts";

/** Length of a correlation id: 24 hex characters (96 bits of SHA-256). */
export const CORRELATION_ID_LENGTH = 24;

/** The deterministic id of one step: the first 24 hex chars of SHA-256 over `[crewId, phaseIndex, agentId, attempt]`. */
export function correlationId(crewId: string, phaseIndex: number, agentId: string, attempt: number): string {
  return hashHex(canonicalize([crewId, phaseIndex, agentId, attempt])).slice(0, CORRELATION_ID_LENGTH);
}

/** The step id used for a fixer agent working on behalf of a failed agent's slot: `fixer#0@merc#2`. */
export function fixerStepAgentId(fixerAgentId: string, failedAgentId: string): string {
  return `${fixerAgentId}@${failedAgentId}`;
}

/** The crew id of the inner crew an agent of a nested-crew role runs: `${crewId}/${agentId}`. */
export function innerCrewId(crewId: string, agentId: string): string {
  return `${crewId}/${agentId}`;
}
