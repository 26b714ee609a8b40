// The verdict per line (docs/kernel.md "Orders with lines"): a claim on an order with lines is decided as ONE verdict
// (ACCEPT only when every line passes), and `lines[]` says what that meant for each line: every line carries the
// claim's verdict; its reason code is the claim's, except in a claim failed by a per-line rule (category,
// authorisation, window) on several lines, where a line that failed the rule carries it and a line that passed
// carries OTHER_LINE_FAILED (as does a line within what its units cost, in a claim that asked another line more: that
// line carries EXCEEDS_REFUNDABLE_BALANCE). The amount is the claim's amount as it falls on the lines (`allocate`).
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, Order, ResponsibilityContract } from "../integrity/contracts.ts";
import type { VerdictKind } from "../integrity/verdict.ts";
import { parseIsoMs } from "../integrity/time.ts";
import { allocate, claimLines, namedLines } from "./claim-lines.ts";
import { isLineRuleCode, LINE_RULES } from "./line-rules.ts";
import { money, moneyJson, parseMoney } from "./money.ts";
import { readOrder, type OrderLineView } from "./order-view.ts";
import { OTHER_LINE_FAILED, type VerdictLine } from "./public-amount.ts";

/** What the lines of a verdict are derived from: the verdict, its amount, the order and claim it decided, the policy. */
export type VerdictLinesInput = {
  readonly verdict: { readonly verdict: VerdictKind; readonly reason_code: string };
  /** The verdict's amount (the record's `amount_eur`: major units of the order's currency), or null. */
  readonly amountEur: number | null;
  readonly order: Order | undefined;
  readonly claim: Pick<Claim, "category" | "lines" | "items"> | undefined;
  readonly contract: Pick<ClaimsContract, "allowed_refund_categories" | "return_window_days">;
  readonly responsibility: Pick<ResponsibilityContract, "authorized_categories">;
  readonly receivedAt: string;
};

/**
 * The verdict's lines, or undefined when there are none to tell: an order in today's one-line form, an order not
 * read, a claim whose lines are not the order's (LINE_NOT_IN_ORDER) or not known (LINE_AMBIGUOUS), or an amount that
 * is not a positive amount of the order's currency (INVALID_AMOUNT).
 */
export function verdictLines(input: VerdictLinesInput): VerdictLine[] | undefined {
  const { order, claim, verdict } = input;
  if (order === undefined || claim === undefined) return undefined;
  const reading = readOrder(order);
  if (!reading.ok || reading.view.oneLine) return undefined;
  const { view } = reading;
  const amount = parseMoney(input.amountEur, view.currency);
  if (!amount.ok || amount.money.minor <= 0) return undefined;
  const parts = linesOf(view, claim, amount.money.minor);
  if (parts === undefined) return undefined;
  const code = verdict.reason_code;
  const purchaseMs = parseIsoMs(order.purchase_date);
  const receivedMs = parseIsoMs(input.receivedAt);
  const perLine = parts.length > 1 && isLineRuleCode(code) && purchaseMs !== undefined && receivedMs !== undefined;
  const ctx = {
    contract: input.contract,
    responsibility: input.responsibility,
    elapsedMs: (receivedMs ?? 0) - (purchaseMs ?? 0),
  };
  // A claim that asked a line more than its units cost is rejected for that line; its other lines passed that rule.
  const over = code === "EXCEEDS_REFUNDABLE_BALANCE" && parts.length > 1 ? overAskedLines(view, claim) : undefined;
  return parts.map(([line, minor]) => ({
    line_id: line.line_id,
    verdict: verdict.verdict,
    reason_code:
      (perLine && LINE_RULES[code as keyof typeof LINE_RULES](ctx, line)) ||
      (over !== undefined && over.size > 0 && !over.has(line.line_id))
        ? OTHER_LINE_FAILED
        : code,
    amount: moneyJson(money(minor, view.currency)),
  }));
}

/** The ids of the lines the claim asks more of than their claimed units cost (core/kernel/checks-order.ts). */
function overAskedLines(view: Parameters<typeof claimLines>[0], claim: Pick<Claim, "lines" | "items">): Set<string> {
  const named = namedLines(view, claim);
  return new Set(named?.ok ? named.lines.filter((l) => l.asked > l.cost).map((l) => l.line.line_id) : []);
}

/** The claim's lines with what its amount takes from each; undefined when they are not known. */
function linesOf(
  view: Parameters<typeof claimLines>[0],
  claim: Pick<Claim, "category" | "lines" | "items">,
  minor: number,
): [OrderLineView, number][] | undefined {
  const named = namedLines(view, claim);
  if (named !== undefined) {
    if (!named.ok) return undefined;
    return allocate(minor, named).map(([lineId, take]) => [view.lines.find((l) => l.line_id === lineId)!, take]);
  }
  const candidates = claimLines(view, claim);
  return candidates.length === 1 ? [[candidates[0]!, minor]] : undefined;
}
