// Free text learns lines (docs/llm.md#items-and-lines): the items a text names, read by the pattern extractor, are
// matched by the kernel to the order's lines — by title or sku, else by category — and decide as a claim naming those
// lines; an item that matches no single line leaves the claim to a person (LINE_AMBIGUOUS).
import { describe, expect, it } from "vitest";
import type { Claim } from "../claim/claim.ts";
import { claimFromExtraction, extractClaimFromText } from "../extraction/extraction.ts";
import type { ClaimsContract, Order } from "../integrity/contracts.ts";
import { DAY_MS } from "../integrity/time.ts";
import { lineReserveOf } from "./claim-lines.ts";
import { itemLines } from "./item-lines.ts";
import { decideOnLines, isoAt, LINES_RECEIVED_MS, lineResponsibility } from "./order-lines.test-kit.ts";
import { viewOrder } from "./order-view.ts";
import { verdictLines } from "./verdict-lines.ts";

const RECEIVED_MS = LINES_RECEIVED_MS;
const iso = isoAt;
const responsibility = lineResponsibility;
const POLICY: ClaimsContract = {
  allowed_refund_categories: ["electronics", "clothing", "home"],
  max_refund_without_escalation: 500,
  return_window_days: { default: 14, electronics: 30 },
  currencies: { USD: { max_refund_without_escalation: 600 } },
};

/** A TV, two shirts (no titles: matched by sku or category) and, on the titled order, two lamps. */
const ORDER: Order = {
  order_id: "ord_100",
  purchase_date: iso(RECEIVED_MS - 5 * DAY_MS),
  currency: "USD",
  lines: [
    { line_id: "l1", sku: "TV-55", category: "electronics", quantity: 1, amount: "499.00" },
    { line_id: "l2", sku: "TEE-M", category: "clothing", quantity: 2, amount: "40.00" },
  ],
};
const TITLED: Order = {
  ...ORDER,
  order_id: "ord_200",
  lines: [
    { line_id: "a", title: "Oak desk lamp", category: "home", quantity: 1, amount: "30.00" },
    { line_id: "b", title: "Brass floor lamp", category: "home", quantity: 1, amount: "90.00" },
    { line_id: "c", title: "Linen T-Shirt", sku: "LIN-1", category: "clothing", quantity: 3, amount: "60.00" },
  ],
};

/** The claim the pattern extractor reads from `text`. */
function read(text: string): Claim {
  const extracted = extractClaimFromText(text, RECEIVED_MS);
  if (!extracted.ok) throw new Error(extracted.message);
  const claim = claimFromExtraction(extracted.claim, { text, now: RECEIVED_MS });
  if (!claim.ok) throw new Error(claim.message);
  return claim.claim;
}

/** The kernel's verdict on a proposal that asks exactly what the claim asks, its lines and what the ledger reserves. */
function decide(order: Order, claim: Claim) {
  const { verdict } = decideOnLines({ order, claim, policy: POLICY });
  const lines = verdictLines({
    verdict,
    amountEur: claim.amount_eur,
    order,
    claim,
    contract: POLICY,
    responsibility,
    receivedAt: iso(RECEIVED_MS),
  });
  const reserve = lineReserveOf(order, claim, Math.round(claim.amount_eur * 100), POLICY);
  return { verdict, lines, reserve };
}

describe("the pattern extractor reads the items a text names and the units it counts", () => {
  it.each([
    ["both shirts of ord_100 tore, $40", [{ name: "shirts", quantity: 2 }]],
    ["one of the two shirts of ord_100 tore, $20", [{ name: "shirts", quantity: 1 }]],
    ["ord_100: the TV and one shirt are broken, $519", [{ name: "tv" }, { name: "shirt", quantity: 1 }]],
    ["ord_100: the shirts are torn, $40", [{ name: "shirts" }]],
    ["ord_100: beide Hemden sind kaputt, 40 USD", [{ name: "hemden", quantity: 2 }]],
    ["ord_100 : une des deux chemises est déchirée, 20 USD", [{ name: "chemises", quantity: 1 }]],
    ["ord_100: las dos camisas están rotas, 40 USD", [{ name: "camisas", quantity: 2 }]],
    ["ord_100: ein Hemd ist kaputt, 20 USD", [{ name: "hemd" }]],
    ["ord_100: I paid 40 for the shirts, $40", [{ name: "shirts" }]],
  ])("%s", (text, items) => {
    expect(read(text).items).toEqual(items);
  });

  it("names no items when the text names no product", () => {
    expect(read("order ord_100, refund $40 please").items).toBeUndefined();
  });
});

describe("the kernel matches a free-text claim's items to the order's lines", () => {
  it("'both shirts' is the shirt line, both units: accepted on it, reserved on it", () => {
    const claim = read("Both shirts of order ord_100 tore after one wash, refund $40 please");
    const { verdict, lines, reserve } = decide(ORDER, claim);
    expect(verdict).toMatchObject({ verdict: "ACCEPT" });
    expect(lines).toEqual([
      {
        line_id: "l2",
        verdict: "ACCEPT",
        reason_code: "VALIDATION_PASSED",
        amount: { value: "40.00", currency: "USD" },
      },
    ]);
    expect(reserve?.claimed).toEqual({ l2: 4000 });
  });

  it("'one of the two shirts' is one unit: asking both shirts' price for it exceeds what the unit cost", () => {
    const one = decide(ORDER, read("One of the two shirts of ord_100 tore, refund $20"));
    expect(one.verdict).toMatchObject({ verdict: "ACCEPT" });
    const over = decide(ORDER, read("One of the two shirts of ord_100 tore, refund $40"));
    expect(over.verdict).toMatchObject({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(over.verdict.reason).toMatch(/exceeds what the claimed units cost \(1 × l2 of order ord_100: 20\.0 USD\)/);
  });

  it("'the TV and one shirt' are two lines: the amount falls on the TV, then on the one shirt", () => {
    const claim = read("Order ord_100: the TV and one shirt arrived broken, refund $519");
    const { verdict, lines, reserve } = decide(ORDER, claim);
    expect(verdict).toMatchObject({ verdict: "ACCEPT" });
    expect(lines?.map((l) => [l.line_id, l.amount.value])).toEqual([
      ["l1", "499.00"],
      ["l2", "20.00"],
    ]);
    expect(reserve?.claimed).toEqual({ l1: 49_900, l2: 2000 });
  });

  it("an item's name matches a line's title ('the floor lamp'), and the sku ('LIN-1' shirt by its title word)", () => {
    const view = viewOrder(TITLED);
    expect(itemLines(view, [{ name: "floor lamp" }])).toEqual({ ok: true, lines: [{ line_id: "b" }] });
    expect(itemLines(view, [{ name: "t-shirts", quantity: 2 }])).toEqual({
      ok: true,
      lines: [{ line_id: "c", quantity: 2 }],
    });
    expect(itemLines(view, [{ name: "lin-1" }])).toEqual({ ok: true, lines: [{ line_id: "c" }] });
  });

  it("a part of a line another item names is that line ('the TV's screen')", () => {
    expect(itemLines(viewOrder(ORDER), [{ name: "tv" }, { name: "screen" }])).toEqual({
      ok: true,
      lines: [{ line_id: "l1" }],
    });
  });

  it("an ambiguous name ('the lamp' of two lamps) escalates LINE_AMBIGUOUS, naming the lines it could mean", () => {
    const claim = read("The lamp from ord_200 flickers, refund $30");
    const { verdict, lines, reserve } = decide(TITLED, claim);
    expect(verdict).toMatchObject({ verdict: "ESCALATE", reason_code: "LINE_AMBIGUOUS" });
    expect(verdict.reason).toMatch(/items 'lamp', which do not each match one line .*\(they could mean a, b\)/);
    expect(lines).toBeUndefined();
    expect(reserve?.claimed).toBeUndefined();
  });

  it("an item that matches no line leaves the claim to a person, even beside one that does", () => {
    const claim = read("ord_100: the shirt and the kettle are broken, $40");
    expect(decide(ORDER, claim).verdict).toMatchObject({ verdict: "ESCALATE", reason_code: "LINE_AMBIGUOUS" });
  });

  it("counting more units than the line has is judged against the whole line, as a claim by category", () => {
    const view = viewOrder(ORDER);
    expect(itemLines(view, [{ name: "shirts", quantity: 3 }])).toEqual({ ok: false, candidates: [view.lines[1]] });
    const { verdict, reserve } = decide(ORDER, read("ord_100: all three shirts tore, $40"));
    expect(verdict).toMatchObject({ verdict: "ACCEPT" });
    expect(reserve?.claimed).toEqual({ l2: 4000 });
  });

  it("items are not read on an order in today's one-line form: its one line is the claim's, as always", () => {
    const oneLine: Order = {
      order_id: "ord_300",
      purchase_date: ORDER.purchase_date,
      currency: "USD",
      category: "clothing",
      amount: 40,
    };
    const { verdict, lines } = decide(oneLine, read("One of the two shirts of ord_300 tore, refund $40"));
    expect(verdict).toMatchObject({ verdict: "ACCEPT" });
    expect(lines).toBeUndefined();
  });
});
