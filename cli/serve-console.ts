// The console of `claims serve`: one readable line per bus event, the banner lines that say where orders, money and
// the model go, and the handlers' warnings as lines of text (not the JSON their logger writes).
import type { BusEvent } from "../local/eventbridge/server.ts";
import { DEFAULT_ORDER_SOURCE } from "../app/order-source.ts";

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const amount = (v: unknown): string | undefined => (typeof v === "number" ? `${v} EUR` : undefined);

/** What a bus event says, after its type and claim: every detail type's own fields, never "undefined". */
export function describeBusEvent(type: string, d: Record<string, unknown>): string {
  const parts = (...p: (string | undefined | false)[]) => p.filter((x): x is string => typeof x === "string").join(" ");
  switch (type) {
    case "ClaimVerdict":
      return parts(text(d.verdict), text(d.reason_code));
    case "RefundExecuted":
      return parts(
        amount(d.amount_eur),
        d.order_id !== undefined && `on ${String(d.order_id)}`,
        text(d.approved_by) && `approved by ${String(d.approved_by)}`,
      );
    case "RefundSettled":
      return parts(
        amount(d.amount_eur),
        d.order_id !== undefined && `on ${String(d.order_id)}`,
        text(d.provider) && `by ${String(d.provider)}`,
        text(d.provider_ref),
      );
    case "RefundFailed":
      return parts(
        amount(d.amount_eur),
        d.order_id !== undefined && `on ${String(d.order_id)}`,
        text(d.provider) && `by ${String(d.provider)}`,
        text(d.reason_code) ?? text(d.code),
      );
    case "ReviewDecided":
      return parts(
        text(d.decision),
        amount(d.amount_eur),
        text(d.reviewer) && `by ${String(d.reviewer)}`,
        d.paid_out_of_band === true ? "(paid out of band)" : d.paid_out_of_band === false ? "(left unpaid)" : undefined,
        text(d.resubmitted_claim_id) && `→ ${String(d.resubmitted_claim_id)}`,
      );
    case "ReviewRequested":
    case "ReviewOpened":
      return parts(text(d.origin), text(d.reason_code), amount(d.amount_eur));
    default:
      return parts(text(d.reason_code) ?? text(d.decision) ?? text(d.verdict)) || "";
  }
}

/** One progress line per bus event (an ESCALATE verdict matches two rules but is printed once; the ids remembered are bounded). */
export function busProgress(write: (line: string) => void) {
  const seen = new Set<string>();
  return (_rule: string, event: BusEvent) => {
    if (seen.has(event.id)) return;
    seen.add(event.id);
    if (seen.size > 1000) seen.delete(seen.values().next().value!);
    const d = event.detail as Record<string, unknown>;
    write(
      `  [bus]  ${event["detail-type"].padEnd(16)} ${String(d.claim_id ?? "")}  ${describeBusEvent(event["detail-type"], d)}`.trimEnd(),
    );
  };
}

/**
 * Where the settings send orders, money and the model, one banner line each (`orders`, `money`, `model`), each with
 * the variable that decides it. The order API's line comes with its check (`claims serve` prints it then).
 */
export function destinationLines(
  env: Readonly<Record<string, string | undefined>>,
  facts: { orders: number; llm: string; provider: string },
): string[] {
  const source = env.ORDER_SOURCE?.trim() || DEFAULT_ORDER_SOURCE;
  const orders =
    source === "http"
      ? []
      : [
          `  orders   the config file's ${facts.orders} orders, seeded into the table on every start (ORDER_SOURCE=${source})`,
        ];
  const stripeBase = env.STRIPE_API_BASE?.trim();
  const money =
    facts.provider === "stripe"
      ? `Stripe at ${stripeBase ? `${stripeBase} (STRIPE_API_BASE)` : "https://api.stripe.com (test or live by STRIPE_API_KEY)"}; its webhook ${env.STRIPE_WEBHOOK_SECRET?.trim() ? "verified with STRIPE_WEBHOOK_SECRET" : "off (no STRIPE_WEBHOOK_SECRET)"} (PAYMENT_PROVIDER=stripe)`
      : facts.provider === "simulated"
        ? "simulated: every refund settles at once and no money moves (PAYMENT_PROVIDER=simulated)"
        : `${facts.provider} (PAYMENT_PROVIDER=${facts.provider})`;
  return [
    ...orders,
    `  money    ${money}`,
    `  model    ${facts.llm} (LLM_PROVIDER=${env.LLM_PROVIDER?.trim() || "rules"})`,
  ];
}
