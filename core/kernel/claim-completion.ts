// A claim on lines, completed from its order at intake (docs/orders.md#claims-on-lines). The claim form
// `{ order_id, lines: [{ line_id, quantity?, amount? }], reason }` leaves out what only the order knows: each line's
// amount defaults to what its units cost (line paid amount per unit × units, rounded down to the minor unit), the
// claim's `amount_eur` (major units of the ORDER's currency, its name from before currencies) is the sum of its
// lines, and its `category` the first line's. A line the order does not have, more units than were bought, or an
// amount not exact to the order's currency is the submitter's mistake: a 400 naming the field, nothing stored. An
// amount above what the units cost is not: the kernel judges it (EXCEEDS_REFUNDABLE_BALANCE on that line).
import { ClaimSchema, type Claim, type ClaimSubmission } from "../claim/claim.ts";
import type { Order } from "../integrity/contracts.ts";
import { costOfUnits, readOrder } from "./order-view.ts";
import { describeMoney, formatMoney, MAX_MINOR, parseMoney, toMajor } from "./money.ts";

/** A field of the submitted claim that its order makes wrong: its path under `claim` and what is wrong. */
export type CompletionIssue = { readonly path: (string | number)[]; readonly message: string };

/** The completed claim, or why the submission cannot be one (`issues`), or an order that cannot be used (`garbled`). */
export type Completion =
  | { readonly ok: true; readonly claim: Claim }
  | { readonly ok: false; readonly issues: CompletionIssue[] }
  | { readonly ok: false; readonly garbled: string };

/**
 * Whether intake completes `claim` from its order: it names lines and leaves out `amount_eur` or `category`, or asks
 * an amount of a line. Every other claim is stored as submitted (today's forms, the kernel judging its lines).
 */
export function needsCompletion(claim: ClaimSubmission): boolean {
  if (claim.lines === undefined) return false;
  return (
    claim.amount_eur === undefined || claim.category === undefined || claim.lines.some((l) => l.amount !== undefined)
  );
}

/**
 * Completes `claim` from `order` (undefined: the order source has no such order). Each line carries the amount asked
 * of it as the exact decimal text of the order's currency; `amount_eur`, when stated beside line amounts, must be
 * their sum.
 */
export function completeClaim(claim: ClaimSubmission, order: Order | undefined): Completion {
  if (order === undefined)
    return issue(
      ["order_id"],
      `order ${JSON.stringify(claim.order_id)} is not known: a claim that names lines without amount_eur is completed from its order`,
    );
  const reading = readOrder(order);
  if (!reading.ok) return { ok: false, garbled: reading.problem };
  const { view } = reading;
  const { currency } = view;
  const issues: CompletionIssue[] = [];
  const lines: NonNullable<Claim["lines"]> = [];
  let total = 0;
  for (const [i, named] of (claim.lines ?? []).entries()) {
    const line = view.lines.find((l) => l.line_id === named.line_id);
    if (!line) {
      issues.push({
        path: ["lines", i, "line_id"],
        message: `line ${JSON.stringify(named.line_id)} is not a line of order ${view.order_id} (its lines: ${view.lines.map((l) => l.line_id).join(", ")})`,
      });
      continue;
    }
    const units = named.quantity ?? line.quantity;
    if (units > line.quantity) {
      issues.push({
        path: ["lines", i, "quantity"],
        message: `${units} units of line ${line.line_id} claimed; order ${view.order_id} bought ${line.quantity}`,
      });
      continue;
    }
    let asked = costOfUnits(line, units);
    if (named.amount !== undefined) {
      const parsed = parseMoney(named.amount, currency, { strings: true });
      if (!parsed.ok) {
        issues.push({
          path: ["lines", i, "amount"],
          message: `${parsed.message} (order ${view.order_id} is in ${currency})`,
        });
        continue;
      }
      asked = parsed.money;
    }
    total += asked.minor;
    lines.push({ ...named, amount: formatMoney(asked) });
  }
  if (issues.length > 0) return { ok: false, issues };
  if (total > MAX_MINOR) return issue(["lines"], "the lines ask more than the supported maximum");
  const amount = toMajor({ minor: total, currency });
  if (claim.amount_eur !== undefined && claim.lines!.some((l) => l.amount !== undefined)) {
    const stated = parseMoney(claim.amount_eur, currency);
    if (!stated.ok || stated.money.minor !== total)
      return issue(
        ["amount_eur"],
        `amount_eur ${claim.amount_eur} is not the sum of the lines' amounts (${describeMoney({ minor: total, currency })}): state one or the other`,
      );
  }
  const category = claim.category ?? view.lines.find((l) => l.line_id === lines[0]!.line_id)!.category;
  // A claim that states amount_eur and no line amounts keeps today's meaning: its amount falls on its lines in order.
  const keepAmounts = claim.amount_eur === undefined || claim.lines!.some((l) => l.amount !== undefined);
  // The completed claim is what is stored and audited: it must read back as a claim (amount_eur within its bound).
  const completed = ClaimSchema.safeParse({
    ...claim,
    amount_eur: claim.amount_eur ?? amount,
    category,
    lines: keepAmounts ? lines : claim.lines!,
  });
  if (!completed.success)
    return {
      ok: false,
      issues: completed.error.issues.map((i) => ({
        path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
        message:
          i.path[0] === "amount_eur" && claim.amount_eur === undefined
            ? `the lines ask ${describeMoney({ minor: total, currency })}: ${i.message}`
            : i.message,
      })),
    };
  return { ok: true, claim: completed.data };
}

function issue(path: (string | number)[], message: string): Completion {
  return { ok: false, issues: [{ path, message }] };
}
