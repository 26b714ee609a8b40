// The snapshot format: a plain JSON value keyed on `status`. It stores only what cannot be
// derived from the graph: the current phase's input once, and one small state per agent slot.

import type { MemoryCommand, StepError } from "./events.ts";
import type { JsonValue } from "./json.ts";
import type { Task } from "./schema.ts";

/** Why a slot went to a fixer: its agent failed (`fault`) or timed out (`stall`). */
export type FaultKind = "fault" | "stall";

/** A message or delegation an agent sent, held until its phase settles (then relayed or refused). */
export type HeldMessage = { to: string; body: JsonValue };

/** A delegation held until its phase settles. */
export type HeldDelegation = { to: string; task: JsonValue };

/**
 * One agent slot of the current phase as a snapshot stores it (in memory it is a tagged `Slot`,
 * see `slots.ts`), in compact form (`a` = attempt, omitted when 1;
 * `fx` = the slot went to a fixer, and why):
 * - `0`: awaiting the agent's first attempt;
 * - `{ a }`: awaiting the agent's attempt `a` (a retry);
 * - `{ fx, e, a? }`: awaiting the fixer step that replaces a failed attempt (`e` is the failure);
 * - `{ n }`: the agent's inner crew is running (`n` is its snapshot);
 * - `{ f, e, a?, fx? }`: failed (`f`: how) in the current round, waiting for the round to settle;
 * - `{ ok, a?, fx?, m?, msg?, d? }`: done with output `ok` (plus held memory commands, messages, delegations);
 * - `{ x, a?, fx? }`: failed for good with error `x`.
 */
export type SlotState =
  | 0
  | { a: number }
  | { fx: FaultKind; e: StepError; a?: number }
  | { n: CrewSnapshot }
  | { f: FaultKind; e: StepError; a?: number; fx?: FaultKind }
  | { ok: JsonValue; a?: number; fx?: FaultKind; m?: MemoryCommand[]; msg?: HeldMessage[]; d?: HeldDelegation[] }
  | { x: StepError; a?: number; fx?: FaultKind };

type SnapshotBase = {
  schema_version: "1.0";
  crewId: string;
  /** Fingerprint of the graph (root snapshots only): resuming on another graph is refused. */
  graph?: string;
  task?: Task;
  /** Attempts per agent step, when not 1 (root snapshots only). */
  maxAttempts?: number;
  /** Exported memory (root snapshots only, when the adapter keeps state in process). */
  memory?: JsonValue;
};

/** A session that has not started. */
export type IdleCrewSnapshot = SnapshotBase & { status: "idle" };

/** A running session: current phase, its input, when its current round was requested, one state per slot. */
export type RunningCrewSnapshot = SnapshotBase & {
  status: "running";
  phase: number;
  input: JsonValue;
  roundMs: number;
  slots: SlotState[];
};

/** A session that ended with an output. */
export type CompletedCrewSnapshot = SnapshotBase & { status: "completed"; phase: number; output: JsonValue };

/** A session that ended without an output. */
export type FailedCrewSnapshot = SnapshotBase & { status: "failed"; phase: number; reason: string; code: string };

/** A cancelled session. */
export type CancelledCrewSnapshot = SnapshotBase & { status: "cancelled"; phase: number; reason: string };

/** A serialisable session state; round-trips through `JSON.parse(JSON.stringify(…))`. */
export type CrewSnapshot =
  | IdleCrewSnapshot
  | RunningCrewSnapshot
  | CompletedCrewSnapshot
  | FailedCrewSnapshot
  | CancelledCrewSnapshot;

/** A session's status. */
export type CrewStatus = CrewSnapshot["status"];
