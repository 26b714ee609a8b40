// Which lines of an order a claim is about (docs/kernel.md "Orders with lines"). Today's claim form names a category,
// not a line: the order's one line of that category is the claim's line; several lines of it (or none, on an order of
// several lines) leave the claim's line to a person — LINE_AMBIGUOUS — and its candidates are all those lines.
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, Order } from "../integrity/contracts.ts";
import type { LineReserve } from "./ledger.ts";
import { readOrder, type OrderLineView, type OrderView } from "./order-view.ts";
import { refundsShipping } from "./policy.ts";

/**
 * The candidate lines of `claim` on the order: an order of one line → that line (whatever the claim's category: the
 * ORDER's category decides, as always); else the lines of the claim's category, or every line when none has it.
 */
export function claimLines(view: OrderView, claim: Pick<Claim, "category">): readonly OrderLineView[] {
  if (view.lines.length === 1) return view.lines;
  const matching = view.lines.filter((l) => l.category === claim.category);
  return matching.length > 0 ? matching : view.lines;
}

/**
 * What the refund ledger needs to keep every line of an order with lines at most what was paid for it
 * (core/kernel/ledger.ts `lineCharge`): the lines' paid amounts, the shipping the policy refunds, and what `cents`
 * (the claim's refund, in the order's minor units) takes from the claim's line — none named when only a person can
 * tell which line (LINE_AMBIGUOUS, or no claim). Undefined for today's one-line form (its one line is the order, which
 * the ledger bounds already) and for a garbled order (never reserved on).
 */
export function lineReserveOf(
  order: Order,
  claim: Pick<Claim, "category"> | undefined,
  cents: number,
  contract: Pick<ClaimsContract, "refund_shipping">,
): LineReserve | undefined {
  const reading = readOrder(order);
  if (!reading.ok || reading.view.oneLine) return undefined;
  const { view } = reading;
  const paid = Object.fromEntries(view.lines.map((l) => [l.line_id, l.amount.minor]));
  const shipping = refundsShipping(contract) ? view.shipping.minor : 0;
  const candidates = claim === undefined ? view.lines : claimLines(view, claim);
  if (candidates.length !== 1) return { paid, shipping };
  return { paid, shipping, claimed: Object.fromEntries([[candidates[0]!.line_id, cents]]) };
}
