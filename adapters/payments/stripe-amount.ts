// A refund amount as Stripe reads it (https://docs.stripe.com/currencies): in the charge currency's smallest unit by
// Stripe's own rules, which differ from ISO 4217 in places. Zero-decimal currencies (JPY, KRW, …) take the amount as
// is; three-decimal ones (BHD, JOD, KWD, OMR, TND) take it in thousandths with the last digit 0; ISK is sent as a
// two-decimal amount of whole krónur. An amount Stripe cannot take exactly is refused here, never rounded.
import { minorUnitsOf } from "../../core/integrity/currency.ts";

/** Stripe's zero-decimal currencies (its list; MGA and UGX included though ISO 4217 gives them decimals). */
const STRIPE_ZERO_DECIMAL = new Set("BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF".split(" "));
/** Stripe's three-decimal currencies: amounts in thousandths, the last digit 0. */
const STRIPE_THREE_DECIMAL = new Set("BHD JOD KWD OMR TND".split(" "));

/** The `amount` Stripe takes for `minor` ISO 4217 minor units of `currency`, or why it cannot be sent exactly. */
export function stripeAmount(
  minor: number,
  currency: string,
): { ok: true; amount: number; currency: string } | { ok: false; reason: string } {
  const iso = minorUnitsOf(currency);
  if (iso === undefined) return { ok: false, reason: `${JSON.stringify(currency)} is not an ISO 4217 currency` };
  if (!Number.isSafeInteger(minor) || minor <= 0)
    return { ok: false, reason: `a refund is a positive whole number of minor units, got ${String(minor)}` };
  const lower = currency.toLowerCase();
  const shown = `${minor} minor units of ${currency}`;
  if (STRIPE_ZERO_DECIMAL.has(currency)) {
    const unit = 10 ** iso;
    return minor % unit === 0
      ? { ok: true, amount: minor / unit, currency: lower }
      : { ok: false, reason: `${shown}: Stripe takes ${currency} in whole units only` };
  }
  if (STRIPE_THREE_DECIMAL.has(currency))
    return minor % 10 === 0
      ? { ok: true, amount: minor, currency: lower }
      : { ok: false, reason: `${shown}: Stripe takes ${currency} with the last of its three decimals 0` };
  if (currency === "ISK") return { ok: true, amount: minor * 100, currency: lower };
  if (iso !== 2) return { ok: false, reason: `${currency} has ${iso} decimals, and Stripe takes it with two` };
  return { ok: true, amount: minor, currency: lower };
}
