// Money as integer euro cents: exact conversion from 2-decimal amounts and a seed-compatible text form.
import { MoneyError } from "../integrity/errors.ts";

/** Largest amount the kernel handles, in cents (10 billion EUR); larger values lose cent precision in doubles. */
export const MAX_CENTS = 1_000_000_000_000;

/** Why a value is not an exact cent amount. */
type CentsProblem = "MISSING" | "NOT_A_NUMBER" | "NOT_FINITE" | "SUB_CENT" | "TOO_LARGE";

/** The result of reading an unknown value as euros: integer cents, or the reason it is not money. */
type CentsParse = { ok: true; cents: number } | { ok: false; problem: CentsProblem; message: string };

/**
 * Reads an unknown value as a euro amount with at most two decimals and returns integer cents.
 * Strings are refused (even "299.99"): money must arrive as a JSON number. Float noise below
 * a millionth of a cent (0.1 + 0.2) is forgiven; a third decimal (299.999) is not.
 */
export function parseCents(value: unknown): CentsParse {
  if (value === undefined || value === null) return { ok: false, problem: "MISSING", message: "amount is missing" };
  if (typeof value !== "number")
    return { ok: false, problem: "NOT_A_NUMBER", message: `amount must be a number, got ${describe(value)}` };
  if (!Number.isFinite(value))
    return { ok: false, problem: "NOT_FINITE", message: `amount must be a finite number, got ${String(value)}` };
  const scaled = value * 100;
  const cents = Math.round(scaled);
  if (Math.abs(cents) > MAX_CENTS)
    return {
      ok: false,
      problem: "TOO_LARGE",
      message: `amount ${value} exceeds the supported maximum of ${formatEur(MAX_CENTS)} EUR`,
    };
  const tolerance = Math.max(1e-6, Math.abs(scaled) * 4 * Number.EPSILON);
  if (Math.abs(scaled - cents) > tolerance)
    return { ok: false, problem: "SUB_CENT", message: `amount ${value} has more than two decimals` };
  return { ok: true, cents: cents === 0 ? 0 : cents };
}

/** Converts euros with at most two decimals to exact integer cents (299.99 → 29999); throws `MoneyError` otherwise. */
export function toCents(eur: number): number {
  const parsed = parseCents(eur);
  if (!parsed.ok) throw new MoneyError(`toCents: ${parsed.message}`);
  return parsed.cents;
}

/** Converts integer cents back to a euro number (29999 → 299.99). */
export function centsToEur(cents: number): number {
  assertCents(cents, "centsToEur");
  return cents / 100;
}

/**
 * Euro text in the seed's style (Python float repr): at least one decimal, no trailing zero beyond it —
 * 120000 → "1200.0", 50000 → "500.0", 29999 → "299.99", 29990 → "299.9", 5 → "0.05".
 */
export function formatEur(cents: number): string {
  assertCents(cents, "formatEur");
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const euros = Math.trunc(abs / 100);
  const rest = abs % 100;
  const decimals = rest === 0 ? "0" : rest % 10 === 0 ? String(rest / 10) : String(rest).padStart(2, "0");
  return `${sign}${euros}.${decimals}`;
}

function assertCents(cents: number, fn: string): void {
  if (!Number.isSafeInteger(cents)) throw new MoneyError(`${fn}: cents must be a safe integer, got ${String(cents)}`);
}

function describe(value: unknown): string {
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
