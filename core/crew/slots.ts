// The state of one agent slot of the current phase: a union tagged by `kind` in memory, and the
// compact form a snapshot stores (`SlotState`), converted only at the snapshot boundary.

import type { MemoryCommand, StepError } from "./events.ts";
import type { JsonValue } from "./json.ts";
import type { CrewState } from "./machine.ts";
import type { FaultKind, HeldDelegation, HeldMessage, SlotState } from "./snapshot.ts";

/** Awaiting the agent's attempt `attempt` (1, or a retry). */
export type AgentSlot = { kind: "agent"; attempt: number };

/** Awaiting the fixer step that stands in for the agent's failed attempt `attempt` (`fixer`: why, `error`: the failure). */
export type FixerSlot = { kind: "fixer"; attempt: number; fixer: FaultKind; error: StepError };

/** The agent's inner crew is running. */
export type NestedSlot = { kind: "nested"; inner: CrewState };

/** Failed (`how`) in the current round, waiting for the round to settle; `fixer` when it was a fixer step. */
export type FailingSlot = {
  kind: "failing";
  attempt: number;
  fixer: FaultKind | undefined;
  how: FaultKind;
  error: StepError;
};

/** Done with `output`, holding what the phase applies when it settles (memory commands, messages, delegations). */
export type DoneSlot = {
  kind: "ok";
  attempt: number;
  fixer: FaultKind | undefined;
  output: JsonValue;
  memory: MemoryCommand[] | undefined;
  messages: HeldMessage[] | undefined;
  delegations: HeldDelegation[] | undefined;
};

/** Failed for good. */
export type FailedSlot = { kind: "failed"; attempt: number; fixer: FaultKind | undefined; error: StepError };

/** What one agent slot is doing, in the working state of a crew. */
export type Slot = AgentSlot | FixerSlot | NestedSlot | FailingSlot | DoneSlot | FailedSlot;

/** What a slot is doing: awaiting its agent or a fixer, running an inner crew, failed this round, done, or failed. */
export type SlotKind = Slot["kind"];

/** The slot awaiting an agent's first attempt (shared: slot states are replaced, never changed). */
export const FIRST_ATTEMPT: AgentSlot = Object.freeze<AgentSlot>({ kind: "agent", attempt: 1 });

/** A slot awaiting the agent's attempt `attempt`. */
export function awaitingAgent(attempt: number): AgentSlot {
  return attempt === 1 ? FIRST_ATTEMPT : { kind: "agent", attempt };
}

/** The agent attempt a slot is on or ended with (1 unless retried; 1 for an inner crew). */
export function attemptOf(s: Slot): number {
  return s.kind === "nested" ? 1 : s.attempt;
}

/** The fixer trigger a slot went to a fixer for, if it did. */
export function fixerOf(s: Slot): FaultKind | undefined {
  switch (s.kind) {
    case "agent":
    case "nested":
      return undefined;
    default:
      return s.fixer;
  }
}

/** A done slot with `output`, holding what the answer sent for the phase's settle (empty lists dropped). */
export function doneSlot(
  output: JsonValue,
  attempt: number,
  fixer: FaultKind | undefined,
  held: { memoryCommands?: MemoryCommand[]; messages?: HeldMessage[]; delegations?: HeldDelegation[] } = {},
): DoneSlot {
  const { memoryCommands: m, messages: msg, delegations: d } = held;
  return {
    kind: "ok",
    attempt,
    fixer,
    output,
    memory: m !== undefined && m.length > 0 ? m : undefined,
    messages: msg !== undefined && msg.length > 0 ? msg : undefined,
    delegations: d !== undefined && d.length > 0 ? d : undefined,
  };
}

/** Whether the slot awaits the answer to a step it requested (its agent's or a fixer's). */
export function isAwaiting(s: Slot): s is AgentSlot | FixerSlot {
  return s.kind === "agent" || s.kind === "fixer";
}

/**
 * The compact form of a slot that runs no inner crew (`a` only when the attempt is not 1, `fx`
 * only when set), keys in the order snapshots have always been written.
 */
export function compactSlot(s: Exclude<Slot, NestedSlot>): SlotState {
  switch (s.kind) {
    case "agent":
      return s.attempt === 1 ? 0 : { a: s.attempt };
    case "fixer": {
      const c: { fx: FaultKind; e: StepError; a?: number } = { fx: s.fixer, e: s.error };
      if (s.attempt !== 1) c.a = s.attempt;
      return c;
    }
    case "failing": {
      const c: { f: FaultKind; e: StepError; a?: number; fx?: FaultKind } = { f: s.how, e: s.error };
      if (s.attempt !== 1) c.a = s.attempt;
      if (s.fixer !== undefined) c.fx = s.fixer;
      return c;
    }
    case "ok": {
      const c: Extract<SlotState, { ok: JsonValue }> = { ok: s.output };
      if (s.attempt !== 1) c.a = s.attempt;
      if (s.fixer !== undefined) c.fx = s.fixer;
      if (s.memory !== undefined) c.m = s.memory;
      if (s.messages !== undefined) c.msg = s.messages;
      if (s.delegations !== undefined) c.d = s.delegations;
      return c;
    }
    case "failed": {
      const c: { x: StepError; a?: number; fx?: FaultKind } = { x: s.error };
      if (s.attempt !== 1) c.a = s.attempt;
      if (s.fixer !== undefined) c.fx = s.fixer;
      return c;
    }
  }
}

/** A stored slot state once read: a slot, the snapshot of an inner crew to load, or what is wrong with it. */
export type ReadSlot = { slot: Exclude<Slot, NestedSlot> } | { inner: unknown } | { problem: string };

/**
 * Reads a stored slot state (the compact form, see `SlotState`), checking the fields it uses.
 * Which state it is goes by the first key present of `ok`, `x`, `f`, `n`, `fx`, `a` (`0` is the
 * first attempt), as snapshots have always been read.
 */
export function readSlot(c: unknown): ReadSlot {
  if (c === 0) return { slot: FIRST_ATTEMPT };
  if (typeof c !== "object" || c === null || Array.isArray(c)) return { problem: "is not a slot state" };
  const o = c as Record<string, unknown>;
  const done = "ok" in o;
  if (!done && !("x" in o) && !("f" in o) && "n" in o) {
    const n = o.n;
    return typeof n === "object" && n !== null && !Array.isArray(n)
      ? { inner: n }
      : { problem: "runs an inner crew with no snapshot" };
  }
  const a = o.a === undefined ? 1 : o.a;
  if (typeof a !== "number" || !Number.isInteger(a) || a < 1)
    return { problem: "has an attempt that is not an integer ≥ 1" };
  const fixer = o.fx;
  if (fixer !== undefined && fixer !== "fault" && fixer !== "stall")
    return { problem: "names an unknown fixer trigger" };
  if (done) {
    return {
      slot: {
        kind: "ok",
        attempt: a,
        fixer,
        output: o.ok as JsonValue,
        memory: o.m as MemoryCommand[] | undefined,
        messages: o.msg as HeldMessage[] | undefined,
        delegations: o.d as HeldDelegation[] | undefined,
      },
    };
  }
  if ("x" in o) return isStepError(o.x) ? { slot: { kind: "failed", attempt: a, fixer, error: o.x } } : NO_ERROR;
  if ("f" in o) {
    if (o.f !== "fault" && o.f !== "stall") return { problem: "failed in an unknown way" };
    return isStepError(o.e) ? { slot: { kind: "failing", attempt: a, fixer, how: o.f, error: o.e } } : NO_ERROR;
  }
  if (fixer !== undefined)
    return isStepError(o.e) ? { slot: { kind: "fixer", attempt: a, fixer, error: o.e } } : NO_ERROR;
  if ("a" in o) return { slot: awaitingAgent(a) };
  return { problem: "is not a slot state" };
}

const NO_ERROR: ReadSlot = { problem: "holds an error that is not { message, code? }" };

function isStepError(e: unknown): e is StepError {
  if (typeof e !== "object" || e === null) return false;
  const { message, code } = e as { message?: unknown; code?: unknown };
  return typeof message === "string" && (code === undefined || typeof code === "string");
}

/** The error code given to a step that passed its deadline. */
export const STEP_TIMEOUT = "STEP_TIMEOUT";

/** Whether a failure was a timeout (an answer arriving afterwards is late, not a duplicate). */
export function isTimeout(e: StepError): boolean {
  return e.code === STEP_TIMEOUT;
}

/** The most characters of an error message a slot keeps: a worker's error (a stack, a model's reply) may be any size, the snapshot may not. */
export const MAX_STEP_ERROR_CHARS = 2048;

/** The most characters of an error code a slot keeps. */
export const MAX_STEP_ERROR_CODE_CHARS = 128;

/**
 * `e` with its message cut to at most `MAX_STEP_ERROR_CHARS` characters (ending in a marker that
 * says how many were cut) and its code to `MAX_STEP_ERROR_CODE_CHARS`; `e` itself when both fit.
 * Never splits a surrogate pair.
 */
export function capStepError(e: StepError): StepError {
  const longMessage = e.message.length > MAX_STEP_ERROR_CHARS;
  const longCode = e.code !== undefined && e.code.length > MAX_STEP_ERROR_CODE_CHARS;
  if (!longMessage && !longCode) return e;
  const capped: StepError = { message: longMessage ? cut(e.message, MAX_STEP_ERROR_CHARS) : e.message };
  if (e.code !== undefined) capped.code = longCode ? cut(e.code, MAX_STEP_ERROR_CODE_CHARS) : e.code;
  return capped;
}

function cut(text: string, max: number): string {
  // the marker is sized for the whole length, so the text it ends never exceeds `max`
  let keep = max - marker(text.length).length;
  const last = text.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep--; // do not keep half of a surrogate pair
  return text.slice(0, keep) + marker(text.length - keep);
}

function marker(cutChars: number): string {
  return `… [${cutChars} more characters cut]`;
}
