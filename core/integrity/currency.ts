// ISO 4217: every active currency code with its minor unit (how many decimals its amounts have). A pure table low in
// core/ so that the claim schema (core/claim) can validate a currency at intake and the Money value (core/kernel)
// can scale amounts; funds and metals without a minor unit (XAU, XDR, XXX, …) are not money a shop refunds.
import * as z from "zod";

/** Decimals of each code, from the ISO 4217 list (amendments to 2025): most have 2, these 0, 3 or 4. */
const ZERO = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF";
const THREE = "BHD IQD JOD KWD LYD OMR TND";
const FOUR = "CLF UYW";
const TWO =
  "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF " +
  "CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF " +
  "IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN " +
  "MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS " +
  "SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG";

/** How many decimals an amount in a currency has: its ISO 4217 minor unit. */
export type MinorUnits = 0 | 2 | 3 | 4;

const table = new Map<string, MinorUnits>();
for (const [codes, units] of [
  [TWO, 2],
  [ZERO, 0],
  [THREE, 3],
  [FOUR, 4],
] as const)
  for (const code of codes.split(" ")) table.set(code, units);

/** Every ISO 4217 code this table knows, sorted. */
export const CURRENCY_CODES: readonly string[] = [...table.keys()].sort();

/** True for an active ISO 4217 code with a minor unit (upper case: `USD`, never `usd`). */
export function isCurrencyCode(code: unknown): code is string {
  return typeof code === "string" && table.has(code);
}

/** The minor unit of an ISO 4217 code (JPY 0, EUR 2, KWD 3, CLF 4), or `undefined` for a code the table does not know. */
export function minorUnitsOf(code: string): MinorUnits | undefined {
  return table.get(code);
}

/** A currency code, validated against the table: the message names the code it refuses. */
export const CurrencyCodeSchema = z.string().refine(isCurrencyCode, {
  error: (issue) =>
    `${JSON.stringify(typeof issue.input === "string" ? issue.input.slice(0, 12) : issue.input)} is not an ISO 4217 currency code (e.g. EUR, USD, JPY)`,
});
