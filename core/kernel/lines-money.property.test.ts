// The money invariants of orders with lines, over random baskets (issue 32): lines with quantities in currencies of
// 0, 2 and 3 decimals (JPY, EUR, USD, KWD), shipping refunded or not, claims on a line, on several units, on no known
// line (a person's approval of a LINE_AMBIGUOUS claim) and on the last line with its shipping, decided against a
// STALE read of the ledger (as racing claims are: each read before the others reserved) and reserved by the ledger's
// rule (core/kernel/ledger.ts), releases of failed refunds between them, and one customer's window over orders in
// several currencies. After every step: no line refunded above what was paid for it, no order above its refundable
// total, shipping only where the policy refunds it, integer minor units everywhere, and no amount of one currency
// ever counted with another's (the customer's limits per currency).
//
// The suite runs LINES_PROPERTY_RUNS baskets (default 2,000, a few seconds); `npm run property:lines` runs 100,000
// (bench/RESULTS.md records the run).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { customerLimitsCents, emptyCustomerWindow, reserveOnWindow, type CustomerWindow } from "./customer-window.ts";
import { assertLedgerEntry, emptyLedgerEntry, releaseRefund, reserveRefund, type LedgerEntry } from "./ledger.ts";
import type { LineReserve, ReserveMode } from "./ledger.ts";
import { decimalsOf, formatMoney, money, parseMoney } from "./money.ts";

const RUNS = Number(process.env.LINES_PROPERTY_RUNS ?? 2_000);
const CURRENCIES = ["JPY", "EUR", "USD", "KWD"] as const;
type Currency = (typeof CURRENCIES)[number];

/** One basket: an order with lines in one currency, and what happens to it. */
const basketArb = fc
  .record({
    currency: fc.constantFrom(...CURRENCIES),
    // Paid per line in minor units (1 yen … 5,000 dinars), units bought.
    lines: fc.array(
      fc.record({ paid: fc.integer({ min: 1, max: 5_000_000 }), quantity: fc.integer({ min: 1, max: 4 }) }),
      {
        minLength: 1,
        maxLength: 5,
      },
    ),
    shipping: fc.integer({ min: 0, max: 20_000 }),
    refundShipping: fc.boolean(),
    steps: fc.array(
      fc.record({
        // The line claimed (an index, wrapped), or none known.
        line: fc.option(fc.nat(), { nil: undefined, freq: 5 }),
        // Units claimed of the line, and the part of their cost asked (basis points), plus a stray over-ask.
        units: fc.integer({ min: 1, max: 4 }),
        share: fc.integer({ min: 1, max: 10_000 }),
        over: fc.integer({ min: 0, max: 3 }),
        withShipping: fc.boolean(),
        approved: fc.boolean(),
        // How many steps back the claim read the ledger (a race: 0 is the entry as it stands).
        stale: fc.nat({ max: 3 }),
        release: fc.boolean(),
      }),
      { minLength: 1, maxLength: 8 },
    ),
  })
  .map((b) => ({ ...b, lines: b.lines.map((l, i) => ({ ...l, line_id: `l${i}` })) }));

/** What `units` of a line cost: its paid amount per unit × units, rounded down (order-view.ts costOfUnits). */
const costOf = (paid: number, quantity: number, units: number) =>
  units >= quantity ? paid : Math.floor((paid * units) / quantity);

/** Throws naming the broken invariant (plain checks: `expect` in the inner loop costs more than the ledger). */
function ok(holds: boolean, what: string): void {
  if (!holds) throw new Error(what);
}

function checkEntry(entry: LedgerEntry, paid: Record<string, number>, refundable: number, shipping: number) {
  for (const [lineId, minor] of Object.entries(entry.line_cents ?? {})) {
    ok(Number.isSafeInteger(minor) && minor >= 0, `line ${lineId} counts ${minor}`);
    ok(minor <= paid[lineId]!, `line ${lineId}: ${minor} refunded of ${paid[lineId]} paid`);
  }
  ok(entry.refunded_cents <= refundable, `order: ${entry.refunded_cents} refunded of ${refundable}`);
  ok((entry.shipping_cents ?? 0) <= shipping, `shipping: ${entry.shipping_cents} refunded of ${shipping} refundable`);
  for (const cents of Object.values(entry.claims))
    ok(Number.isSafeInteger(cents) && cents > 0, `a claim holds ${cents}`);
}

describe("money on orders with lines, over random baskets", () => {
  it(`never refunds above a line or the order, nor shipping the policy keeps, in integer minor units (${RUNS} baskets)`, () => {
    let reserved = 0;
    let refusedOnLine = 0;
    fc.assert(
      fc.property(basketArb, (basket) => {
        const { currency } = basket;
        const paid = Object.fromEntries(basket.lines.map((l) => [l.line_id, l.paid]));
        const linesTotal = basket.lines.reduce((a, l) => a + l.paid, 0);
        const shipping = basket.refundShipping ? basket.shipping : 0;
        const refundable = linesTotal + shipping;
        const history: LedgerEntry[] = [emptyLedgerEntry("ord_p")];
        let entry = history[0]!;
        basket.steps.forEach((step, i) => {
          const claimId = `clm_${i}`;
          const read = history[Math.max(0, history.length - 1 - step.stale)]!;
          const bounds: LineReserve = { paid, shipping };
          let cents: number;
          let lines: LineReserve;
          if (step.line === undefined) {
            // A person approved an amount on a claim whose line only they knew.
            cents = Math.max(1, Math.floor((linesTotal * step.share) / 10_000));
            lines = bounds;
          } else {
            const line = basket.lines[step.line % basket.lines.length]!;
            const units = Math.min(step.units, line.quantity);
            // The claim's amount as the kernel would let it through on its (stale) read: the units' cost, at most the
            // line's balance as read, sometimes a few minor units more (a racing claim's read cannot know).
            const asRead = line.paid - (read.line_cents?.[line.line_id] ?? 0);
            const ask = Math.floor((costOf(line.paid, line.quantity, units) * step.share) / 10_000) + step.over;
            const take = Math.max(1, Math.min(ask, Math.max(1, asRead) + step.over));
            const ship = step.withShipping ? Math.max(0, shipping - (read.shipping_cents ?? 0)) : 0;
            cents = take + ship;
            lines = { ...bounds, claimed: { [line.line_id]: take } };
          }
          const mode: ReserveMode = step.approved ? { kind: "approved" } : { kind: "automatic", limitCents: 1e12 };
          const result = reserveRefund(entry, claimId, cents, refundable, mode, lines);
          if (result.ok) {
            reserved++;
            entry = result.entry;
          } else if (result.code === "EXCEEDS_LINE_AMOUNT") refusedOnLine++;
          checkEntry(entry, paid, refundable, shipping);
          if (step.release && result.ok && i % 3 === 0) {
            entry = releaseRefund(entry, claimId);
            checkEntry(entry, paid, refundable, shipping);
          }
          history.push(entry);
        });
        // The last entry is well formed (sums of claims, of line counts, of shipping).
        assertLedgerEntry(entry);
        // Every minor unit is one of the order's currency: the amounts format and parse back in it.
        for (const cents of Object.values(entry.claims)) {
          const m = money(cents, currency);
          const back = parseMoney(formatMoney(m), currency, { strings: true });
          ok(back.ok && back.money.minor === cents, `${cents} minor units of ${currency} do not read back`);
        }
      }),
      { numRuns: RUNS, seed: 32_032 },
    );
    // The property met both sides: refunds made, and refunds a line refused.
    expect(reserved).toBeGreaterThan(RUNS);
    expect(refusedOnLine).toBeGreaterThan(0);
  });

  it(`counts a customer's limits per currency: another currency's refunds never count against one (${RUNS} windows)`, () => {
    const limits = { window_days: 30, max_automatic_refunds: 4, max_automatic_eur: 500 };
    const inMinor = (c: Currency) => customerLimitsCents(limits, c);
    const reservationArb = fc.record({
      currency: fc.constantFrom(...CURRENCIES),
      // Up to 300 major units, counted in the currency's minor units.
      units: fc.integer({ min: 1, max: 300 }),
    });
    fc.assert(
      fc.property(fc.array(reservationArb, { minLength: 1, maxLength: 12 }), (steps) => {
        let window: CustomerWindow = emptyCustomerWindow("cus_p");
        steps.forEach((step, i) => {
          const cents = step.units * 10 ** decimalsOf(step.currency);
          const own = inMinor(step.currency);
          const before = window.reservations.filter((r) => (r.currency ?? "EUR") === step.currency);
          const result = reserveOnWindow(
            window,
            {
              claim_id: `clm_${i}`,
              order_id: `ord_${i}`,
              cents,
              at: "2026-11-30T10:00:00.000Z",
              ...(step.currency === "EUR" ? {} : { currency: step.currency }),
            },
            own,
          );
          const fits =
            before.length + 1 <= own.maxRefunds && before.reduce((a, r) => a + r.cents, 0) + cents <= own.maxCents;
          // Decided on its own currency's reservations only: accepted exactly when they leave room.
          ok(
            result.ok === fits,
            `${step.currency} reservation ${i}: ${result.ok ? "accepted" : "refused"}, fits ${fits}`,
          );
          if (result.ok) window = result.window;
        });
        for (const c of CURRENCIES) {
          const mine = window.reservations.filter((r) => (r.currency ?? "EUR") === c);
          ok(mine.length <= inMinor(c).maxRefunds, `${c}: ${mine.length} refunds`);
          ok(mine.reduce((a, r) => a + r.cents, 0) <= inMinor(c).maxCents, `${c}: above its limit`);
        }
      }),
      { numRuns: RUNS, seed: 32_033 },
    );
  });
});
