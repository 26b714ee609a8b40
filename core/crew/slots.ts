// Helpers over the compact slot states of a snapshot (see `SlotState`).

import type { StepError } from "./events.ts";
import type { FaultKind, SlotState } from "./snapshot.ts";

/** What a slot is doing: awaiting its agent or a fixer, running an inner crew, failed this round, or done. */
export type SlotKind = "agent" | "fixer" | "nested" | "failing" | "ok" | "failed";

/** The kind of a slot state, or undefined when it is not a slot state at all (a corrupt snapshot). */
export function slotKind(s: unknown): SlotKind | undefined {
  if (s === 0) return "agent";
  if (typeof s !== "object" || s === null || Array.isArray(s)) return undefined;
  if ("ok" in s) return "ok";
  if ("x" in s) return "failed";
  if ("f" in s) return "failing";
  if ("n" in s) return "nested";
  if ("fx" in s) return "fixer";
  if ("a" in s) return "agent";
  return undefined;
}

/** The agent attempt a slot is on (1 unless retried). */
export function attemptOf(s: SlotState): number {
  return s === 0 ? 1 : ((s as { a?: number }).a ?? 1);
}

/** The fixer trigger a slot went to a fixer for, if it did. */
export function fixerOf(s: SlotState): FaultKind | undefined {
  return s === 0 ? undefined : (s as { fx?: FaultKind }).fx;
}

/**
 * Adds `a` (only when the attempt is not 1) and then `fx` (only when set) to a fresh slot state and
 * returns it: keeps slot states small, by assignment rather than object spreads (a hot path).
 */
export function withStep<T extends object>(
  state: T,
  attempt: number,
  fx?: FaultKind,
): T & { a?: number; fx?: FaultKind } {
  const s = state as T & { a?: number; fx?: FaultKind };
  if (attempt !== 1) s.a = attempt;
  if (fx !== undefined) s.fx = fx;
  return s;
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
