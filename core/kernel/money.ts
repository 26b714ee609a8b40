// Money as a value: integer minor units with the ISO 4217 currency they count (core/integrity/currency.ts). Arithmetic
// refuses two currencies (there is no FX anywhere money moves); parsing reads decimal strings and JSON numbers exact
// to the currency's minor unit; the euro helpers below (cents, the seed's text form) are the EUR case of it.
import { minorUnitsOf, type MinorUnits } from "../integrity/currency.ts";
import { CurrencyMismatchError, MoneyError } from "../integrity/errors.ts";

/** An amount of money: `minor` integer units of `currency` (cents for EUR, yen for JPY, fils for KWD). */
export type Money = { readonly minor: number; readonly currency: string };

/** Largest amount handled, in minor units (10 billion EUR); larger values lose precision in doubles. */
export const MAX_MINOR = 1_000_000_000_000;

/** Largest amount the kernel handles, in cents (10 billion EUR). */
export const MAX_CENTS = MAX_MINOR;

/** Why a value is not an exact amount of a currency. */
type MoneyProblem = "MISSING" | "NOT_A_NUMBER" | "NOT_FINITE" | "SUB_CENT" | "TOO_LARGE";

/** The result of reading an unknown value as money: the value, or the reason it is not money. */
export type MoneyParse = { ok: true; money: Money } | { ok: false; problem: MoneyProblem; message: string };

/** The result of reading an unknown value as euros: integer cents, or the reason it is not money. */
type CentsParse = { ok: true; cents: number } | { ok: false; problem: MoneyProblem; message: string };

/** The minor unit of `currency`; throws `MoneyError` for a code that is not ISO 4217. */
export function decimalsOf(currency: string): MinorUnits {
  const units = minorUnitsOf(currency);
  if (units === undefined) throw new MoneyError(`${JSON.stringify(currency)} is not an ISO 4217 currency code`);
  return units;
}

/** `minor` units of `currency`; throws `MoneyError` unless `minor` is a safe integer and the code ISO 4217. */
export function money(minor: number, currency: string): Money {
  decimalsOf(currency);
  assertMinor(minor, "money");
  return { minor: minor === 0 ? 0 : minor, currency };
}

/** Nothing, in `currency`. */
export function zero(currency: string): Money {
  return money(0, currency);
}

/** Integer euro cents as Money. */
export function eur(cents: number): Money {
  return money(cents, "EUR");
}

/** Throws `CurrencyMismatchError` unless both amounts count the same currency. */
export function assertSameCurrency(a: Money, b: Money, what = "money"): void {
  if (a.currency !== b.currency)
    throw new CurrencyMismatchError(`${what}: ${a.currency} and ${b.currency} cannot be combined (no FX)`);
}

/** a + b, in their one currency. */
export function add(a: Money, b: Money): Money {
  assertSameCurrency(a, b, "add");
  return money(a.minor + b.minor, a.currency);
}

/** a − b, in their one currency. */
export function subtract(a: Money, b: Money): Money {
  assertSameCurrency(a, b, "subtract");
  return money(a.minor - b.minor, a.currency);
}

/** The sum of `amounts`, all in `currency` (nothing is zero). */
export function sum(currency: string, amounts: Iterable<Money>): Money {
  let total = zero(currency);
  for (const m of amounts) total = add(total, m);
  return total;
}

/** −1, 0 or 1 as a is less than, equal to or more than b (same currency). */
export function compare(a: Money, b: Money): -1 | 0 | 1 {
  assertSameCurrency(a, b, "compare");
  return a.minor < b.minor ? -1 : a.minor > b.minor ? 1 : 0;
}

/** The smaller of two amounts (same currency). */
export function min(a: Money, b: Money): Money {
  return compare(a, b) <= 0 ? a : b;
}

/** The larger of two amounts (same currency). */
export function max(a: Money, b: Money): Money {
  return compare(a, b) >= 0 ? a : b;
}

/** `m` × `factor` (an integer), exact. */
export function times(m: Money, factor: number): Money {
  if (!Number.isSafeInteger(factor)) throw new MoneyError(`times: factor must be an integer, got ${String(factor)}`);
  return money(m.minor * factor, m.currency);
}

/**
 * Reads an unknown value as an amount of `currency`: a JSON number, or (with `strings`) a decimal string such as
 * "499.00", exact to the currency's minor unit (JPY none, EUR two, KWD three decimals). Float noise below a
 * millionth of a minor unit (0.1 + 0.2) is forgiven in a number; a string may not carry more decimals than the unit.
 */
export function parseMoney(value: unknown, currency: string, opts: { strings?: boolean } = {}): MoneyParse {
  const decimals = decimalsOf(currency);
  if (value === undefined || value === null) return { ok: false, problem: "MISSING", message: "amount is missing" };
  if (typeof value === "string" && opts.strings) return parseDecimalText(value, currency, decimals);
  if (typeof value !== "number")
    return {
      ok: false,
      problem: "NOT_A_NUMBER",
      message: `amount must be ${opts.strings ? "a decimal string or a number" : "a number"}, got ${describe(value)}`,
    };
  if (!Number.isFinite(value))
    return { ok: false, problem: "NOT_FINITE", message: `amount must be a finite number, got ${String(value)}` };
  const scaled = value * 10 ** decimals;
  const minor = Math.round(scaled);
  if (Math.abs(minor) > MAX_MINOR) return tooLarge(String(value), currency);
  const tolerance = Math.max(1e-6, Math.abs(scaled) * 4 * Number.EPSILON);
  if (Math.abs(scaled - minor) > tolerance)
    return { ok: false, problem: "SUB_CENT", message: `amount ${value} ${tooManyDecimals(currency, decimals)}` };
  return { ok: true, money: { minor: minor === 0 ? 0 : minor, currency } };
}

const DECIMAL_TEXT = /^(-?)(\d+)(?:\.(\d+))?$/;

function parseDecimalText(text: string, currency: string, decimals: MinorUnits): MoneyParse {
  const shown = JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
  const m = DECIMAL_TEXT.exec(text);
  if (!m)
    return {
      ok: false,
      problem: "NOT_A_NUMBER",
      message: `amount ${shown} is not a decimal number (digits with an optional "." and decimals, e.g. "12.50")`,
    };
  const [, sign, whole, fraction = ""] = m;
  if (fraction.length > decimals)
    return { ok: false, problem: "SUB_CENT", message: `amount ${shown} ${tooManyDecimals(currency, decimals)}` };
  const digits = `${whole!.replace(/^0+(?=\d)/, "")}${fraction.padEnd(decimals, "0")}`;
  if (digits.length > 16 || Number(digits) > MAX_MINOR) return tooLarge(shown, currency);
  const minor = Number(`${sign}${digits}`);
  return { ok: true, money: { minor: minor === 0 ? 0 : minor, currency } };
}

function tooLarge(shown: string, currency: string): MoneyParse {
  return {
    ok: false,
    problem: "TOO_LARGE",
    message: `amount ${shown} exceeds the supported maximum of ${formatShort(money(MAX_MINOR, currency))} ${currency}`,
  };
}

const DECIMAL_WORDS = ["none", "one", "two", "three", "four"] as const;

function tooManyDecimals(currency: string, decimals: MinorUnits): string {
  return decimals === 0
    ? `has decimals, and ${currency} has no minor unit`
    : `has more than ${DECIMAL_WORDS[decimals]} decimals`;
}

/** The exact decimal text of an amount, with all the currency's decimals: 1234 EUR cents → "12.34", 1200 JPY → "1200", 1234 KWD fils → "1.234". */
export function formatMoney(m: Money): string {
  const decimals = decimalsOf(m.currency);
  assertMinor(m.minor, "formatMoney");
  const abs = Math.abs(m.minor);
  const sign = m.minor < 0 ? "-" : "";
  if (decimals === 0) return `${sign}${abs}`;
  const unit = 10 ** decimals;
  return `${sign}${Math.trunc(abs / unit)}.${String(abs % unit).padStart(decimals, "0")}`;
}

/**
 * The seed's short text of an amount (Python float repr): at least one decimal, no trailing zero beyond it —
 * 120000 EUR cents → "1200.0", 29990 → "299.9"; a currency without a minor unit has no decimals (1200 JPY → "1200").
 */
export function formatShort(m: Money): string {
  const exact = formatMoney(m);
  if (!exact.includes(".")) return exact;
  const trimmed = exact.replace(/0+$/, "");
  return trimmed.endsWith(".") ? `${trimmed}0` : trimmed;
}

/** An amount with its currency for a human reason: "1200.0 EUR", "499.5 USD", "1200 JPY". */
export function describeMoney(m: Money): string {
  return `${formatShort(m)} ${m.currency}`;
}

/** The amount in major units as a JSON number (1234 cents → 12.34): exact for every amount within MAX_MINOR. */
export function toMajor(m: Money): number {
  const decimals = decimalsOf(m.currency);
  assertMinor(m.minor, "toMajor");
  return m.minor / 10 ** decimals;
}

/** The amount as events and views carry it: `{ value: "12.34", currency: "USD" }`. */
export function moneyJson(m: Money): { value: string; currency: string } {
  return { value: formatMoney(m), currency: m.currency };
}

/**
 * Reads a number with at most three decimals as integer thousandths of its unit (12.345 → 12345), for comparing two
 * amounts of one unknown currency (a claim and its proposal, before the order says which): no currency a shop refunds
 * in has more decimals; the kernel checks exactness against the order's currency.
 */
export function parseThousandths(value: unknown): { ok: true; units: number } | { ok: false; message: string } {
  const parsed = parseMoney(value, "KWD");
  return parsed.ok ? { ok: true, units: parsed.money.minor } : { ok: false, message: parsed.message };
}

// ---- the euro case: integer cents, JSON numbers only, the seed's text form.

/**
 * Reads an unknown value as a euro amount with at most two decimals and returns integer cents.
 * Strings are refused (even "299.99"): money must arrive as a JSON number. Float noise below
 * a millionth of a cent (0.1 + 0.2) is forgiven; a third decimal (299.999) is not.
 */
export function parseCents(value: unknown): CentsParse {
  const parsed = parseMoney(value, "EUR");
  return parsed.ok ? { ok: true, cents: parsed.money.minor } : parsed;
}

/**
 * An amount in major units of `currency` as its exact minor units (12800 JPY → 12800, 12.345 KWD → 12345, 299.99 EUR
 * → 29999); throws `MoneyError` when it is not exact in that currency.
 */
export function toMinor(amount: number, currency: string): number {
  const parsed = parseMoney(amount, currency);
  if (!parsed.ok) throw new MoneyError(`toMinor: ${parsed.message}`);
  return parsed.money.minor;
}

/** Converts euros with at most two decimals to exact integer cents (299.99 → 29999); throws `MoneyError` otherwise. */
export function toCents(eurAmount: number): number {
  const parsed = parseCents(eurAmount);
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
  return formatShort({ minor: cents, currency: "EUR" });
}

function assertCents(cents: number, fn: string): void {
  if (!Number.isSafeInteger(cents)) throw new MoneyError(`${fn}: cents must be a safe integer, got ${String(cents)}`);
}

function assertMinor(minor: number, fn: string): void {
  if (!Number.isSafeInteger(minor))
    throw new MoneyError(`${fn}: minor units must be a safe integer, got ${String(minor)}`);
}

function describe(value: unknown): string {
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
