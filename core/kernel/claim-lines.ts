// Which lines of an order a claim is about (docs/kernel.md "Orders with lines"). Today's claim form names a category,
// not a line: the order's one line of that category is the claim's line; several lines of it (or none, on an order of
// several lines) leave the claim's line to a person — LINE_AMBIGUOUS — and its candidates are all those lines.
import type { Claim } from "../claim/claim.ts";
import type { OrderLineView, OrderView } from "./order-view.ts";

/**
 * The candidate lines of `claim` on the order: an order of one line → that line (whatever the claim's category: the
 * ORDER's category decides, as always); else the lines of the claim's category, or every line when none has it.
 */
export function claimLines(view: OrderView, claim: Pick<Claim, "category">): readonly OrderLineView[] {
  if (view.lines.length === 1) return view.lines;
  const matching = view.lines.filter((l) => l.category === claim.category);
  return matching.length > 0 ? matching : view.lines;
}
