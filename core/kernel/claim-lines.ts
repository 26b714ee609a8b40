// Which lines of an order a claim is about (docs/kernel.md "Orders with lines"). A claim names its lines, or its free
// text names items the kernel matches to lines (core/kernel/item-lines.ts); today's claim form names a category,
// not a line: the order's one line of that category is the claim's line; several lines of it (or none, on an order of
// several lines) leave the claim's line to a person — LINE_AMBIGUOUS — and its candidates are all those lines.
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, Order } from "../integrity/contracts.ts";
import type { LineReserve } from "./ledger.ts";
import { itemLines } from "./item-lines.ts";
import { costOfUnits, readOrder, type OrderLineView, type OrderView } from "./order-view.ts";
import { parseMoney } from "./money.ts";
import { refundsShipping } from "./policy.ts";

/** A line a proposal names, as `buildProposal` puts it in the params (core/integrity/proposal.ts). */
type ProposedLine = { line_id: string; quantity: number | null; amount: number };

/**
 * The lines a proposal names (`params.lines`), or undefined when it names none or they are not lines (then the
 * proposal is decided as for the claim as a whole; the alignment check refuses lines that are not well formed).
 */
export function proposedLinesOf(proposal: unknown): readonly ProposedLine[] | undefined {
  // A policy proposal carries them in its params; the Decision Maker's output (a claim record's `proposal`) at its top.
  const p = proposal as { params?: { lines?: unknown } | null; lines?: unknown } | null | undefined;
  const lines = p?.params?.lines ?? p?.lines;
  if (!Array.isArray(lines) || lines.length === 0) return undefined;
  const wellFormed = lines.every(
    (l: unknown) =>
      l !== null &&
      typeof l === "object" &&
      typeof (l as ProposedLine).line_id === "string" &&
      typeof (l as ProposedLine).amount === "number" &&
      ((l as ProposedLine).quantity === null || typeof (l as ProposedLine).quantity === "number"),
  );
  return wellFormed ? (lines as ProposedLine[]) : undefined;
}

/**
 * The claim as its proposal asks it (docs/kernel.md#orders-with-lines): a proposal that names lines makes them the
 * claim's — each with its units (null: the claim's units of it) and its amount — so the kernel judges, the verdict
 * lists and the ledger reserves exactly the proposed lines; any other proposal leaves the claim as it is. The
 * alignment check (core/kernel/checks-proposal.ts) has made sure they are lines of the claim.
 */
export function claimAsProposed<C extends Pick<Claim, "lines">>(claim: C, proposal: unknown): C {
  const proposed = proposedLinesOf(proposal);
  if (proposed === undefined) return claim;
  return {
    ...claim,
    lines: proposed.map((l) => {
      const units = l.quantity ?? claim.lines?.find((c) => c.line_id === l.line_id)?.quantity;
      return { line_id: l.line_id, ...(units === undefined ? {} : { quantity: units }), amount: l.amount };
    }),
  };
}

/** What of a claim says which lines it is about: its lines, its items, its category. */
type LineFacts = Pick<Claim, "category" | "lines" | "items">;

/**
 * The candidate lines of `claim` on the order: an order of one line → that line (whatever the claim's category: the
 * ORDER's category decides, as always); else the lines its items could mean when they name no line each; else the
 * lines of the claim's category, or every line when none has it.
 */
export function claimLines(view: OrderView, claim: LineFacts): readonly OrderLineView[] {
  const named = namedLines(view, claim);
  if (named?.ok) return named.lines.map((n) => n.line);
  if (view.lines.length === 1) return view.lines;
  const items = linesOfItems(view, claim);
  if (items !== undefined && !items.ok) return items.candidates;
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
  claim: LineFacts | undefined,
  cents: number,
  contract: Pick<ClaimsContract, "refund_shipping">,
): LineReserve | undefined {
  const reading = readOrder(order);
  if (!reading.ok || reading.view.oneLine) return undefined;
  const { view } = reading;
  const paid = Object.fromEntries(view.lines.map((l) => [l.line_id, l.amount.minor]));
  const shipping = refundsShipping(contract) ? view.shipping.minor : 0;
  const named = claim === undefined ? undefined : namedLines(view, claim);
  if (named?.ok) {
    const takes = allocate(cents, named);
    return { paid, shipping, claimed: Object.fromEntries(takes.filter(([, t]) => t > 0)) };
  }
  const candidates = claim === undefined ? view.lines : claimLines(view, claim);
  if (candidates.length !== 1) return { paid, shipping };
  return { paid, shipping, claimed: Object.fromEntries([[candidates[0]!.line_id, cents]]) };
}

/** The lines a claim names, each with its units and what they cost; or why they are not the order's. */
export type NamedLines =
  | {
      readonly ok: true;
      /** Each line with its units, what they cost and what the claim asks of it (its `amount`, else the cost). */
      readonly lines: readonly { line: OrderLineView; units: number; cost: number; asked: number }[];
    }
  | { readonly ok: false; readonly problem: string };

/**
 * The lines its items name, for a claim that names items and no lines, on an order with lines (never on today's
 * one-line form: its one line is the claim's, as it always was). Undefined otherwise.
 */
function linesOfItems(view: OrderView, claim: Pick<Claim, "lines" | "items">) {
  if (claim.lines !== undefined || claim.items === undefined || view.oneLine) return undefined;
  return itemLines(view, claim.items);
}

/**
 * The lines `claim.lines` names on the order (units default to all the line's) — or, for a claim whose free text
 * named items, the lines they match (core/kernel/item-lines.ts) — or the problem: a line id the order does not have,
 * or more units than were bought. Undefined for a claim in today's form (no `lines`, no items that match lines).
 */
export function namedLines(view: OrderView, claim: Pick<Claim, "lines" | "items">): NamedLines | undefined {
  const items = linesOfItems(view, claim);
  const claimed = items?.ok ? items.lines : claim.lines;
  if (claimed === undefined) return undefined;
  const lines = [];
  for (const named of claimed) {
    const line = view.lines.find((l) => l.line_id === named.line_id);
    if (!line)
      return {
        ok: false,
        problem: `line ${JSON.stringify(named.line_id)} is not a line of order ${view.order_id} (its lines: ${view.lines.map((l) => l.line_id).join(", ")})`,
      };
    const units = named.quantity ?? line.quantity;
    if (units > line.quantity)
      return {
        ok: false,
        problem: `${units} units claimed of line ${line.line_id} of order ${view.order_id}, which has ${line.quantity}`,
      };
    const cost = costOfUnits(line, units).minor;
    if (!("amount" in named) || named.amount === undefined) {
      lines.push({ line, units, cost, asked: cost });
      continue;
    }
    // Intake stored it exact in the order's currency (core/kernel/claim-completion.ts); anything else is not this order's.
    const asked = parseMoney(named.amount, view.currency, { strings: true });
    if (!asked.ok || asked.money.minor <= 0)
      return {
        ok: false,
        problem: `an amount ${JSON.stringify(String(named.amount))} of line ${line.line_id} that is not a positive amount of order ${view.order_id}'s ${view.currency}`,
      };
    lines.push({ line, units, cost, asked: asked.money.minor });
  }
  return { ok: true, lines };
}

/**
 * How a claim's amount (minor units) falls on the lines it names: each line in the claim's order takes what is left,
 * at most what the claim asks of it (its `amount`, else what its claimed units cost). The kernel judges each line's
 * part against the line's balance, and the ledger reserves the same parts (one rule, so a decision and its
 * reservation never disagree).
 */
export function allocate(cents: number, named: Extract<NamedLines, { ok: true }>): [string, number][] {
  let left = cents;
  return named.lines.map(({ line, asked }) => {
    const take = Math.min(left, asked);
    left -= take;
    return [line.line_id, take];
  });
}
