// The serve console: a bus line says what each event is (a review decision with its reviewer, never "undefined"),
// the banner says where orders, money and the model go, and the handlers' warnings are lines of text.
import { describe, expect, it } from "vitest";
import { consoleLogger, logLine } from "../local/console-logger.ts";
import { busProgress, describeBusEvent, destinationLines } from "./serve-console.ts";

describe("bus lines", () => {
  it.each([
    ["ReviewDecided", { decision: "APPROVE", amount_eur: 900, reviewer: "alice" }, "APPROVE 900 EUR by alice"],
    ["ReviewDecided", { decision: "DENY", reviewer: "bob" }, "DENY by bob"],
    [
      "ReviewDecided",
      { decision: "CLOSE", reviewer: "bob", paid_out_of_band: true },
      "CLOSE by bob (paid out of band)",
    ],
    [
      "ReviewDecided",
      { decision: "RESUBMIT", reviewer: "bob", resubmitted_claim_id: "clm_2" },
      "RESUBMIT by bob → clm_2",
    ],
    ["ClaimVerdict", { verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT" }, "ESCALATE AMOUNT_ABOVE_LIMIT"],
    ["RefundExecuted", { amount_eur: 60, order_id: "ord_021" }, "60 EUR on ord_021"],
    [
      "RefundSettled",
      { amount_eur: 60, order_id: "ord_021", provider: "stripe", provider_ref: "re_1" },
      "60 EUR on ord_021 by stripe re_1",
    ],
    [
      "ReviewOpened",
      { origin: "REFUND_FAILED", reason_code: "REFUND_FAILED", amount_eur: 60 },
      "REFUND_FAILED REFUND_FAILED 60 EUR",
    ],
    ["SomethingNew", {}, ""],
  ])("%s %j reads %j", (type, detail, expected) => {
    expect(describeBusEvent(type, detail)).toBe(expected);
  });

  it("prints each event once, with its claim, and no 'undefined'", () => {
    const lines: string[] = [];
    const progress = busProgress((l) => lines.push(l));
    const event = {
      id: "e1",
      "detail-type": "ReviewDecided",
      detail: { claim_id: "clm_1", decision: "APPROVE", reviewer: "alice", amount_eur: 900 },
    } as unknown as Parameters<typeof progress>[1];
    progress("escalations", event);
    progress("refunds", event);
    expect(lines).toEqual(["  [bus]  ReviewDecided    clm_1  APPROVE 900 EUR by alice"]);
  });
});

describe("banner lines", () => {
  it("says where orders, money and the model go, each with the variable that decides it", () => {
    expect(destinationLines({}, { orders: 24, llm: "llm provider=rules", provider: "simulated" })).toEqual([
      "  orders   the config file's 24 orders, seeded into the table on every start (ORDER_SOURCE=table)",
      "  money    simulated: every refund settles at once and no money moves (PAYMENT_PROVIDER=simulated)",
      "  model    llm provider=rules (LLM_PROVIDER=rules)",
    ]);
    const stripe = destinationLines(
      { ORDER_SOURCE: "http", STRIPE_API_BASE: "http://127.0.0.1:12111", LLM_PROVIDER: "openai" },
      { orders: 24, llm: "llm provider=openai model=gpt-4o-mini", provider: "stripe" },
    );
    expect(stripe).toEqual([
      "  money    Stripe at http://127.0.0.1:12111 (STRIPE_API_BASE); its webhook off (no STRIPE_WEBHOOK_SECRET) (PAYMENT_PROVIDER=stripe)",
      "  model    llm provider=openai model=gpt-4o-mini (LLM_PROVIDER=openai)",
    ]);
    expect(destinationLines({ STRIPE_WEBHOOK_SECRET: "whsec_x" }, { orders: 1, llm: "m", provider: "stripe" })[1]).toBe(
      "  money    Stripe at https://api.stripe.com (test or live by STRIPE_API_KEY); its webhook verified with STRIPE_WEBHOOK_SECRET (PAYMENT_PROVIDER=stripe)",
    );
  });
});

describe("handler warnings on the console", () => {
  it("are one line of text: level, service, message and fields, errors as name and message", () => {
    const lines: string[] = [];
    const logger = consoleLogger("claims-kernel", "WARN", (l) => lines.push(l));
    logger.info("request handled", { claim_id: "clm_1" });
    logger.warn("order source unreachable", { claim_id: "clm_1", attempts: 3 }, new Error("ECONNREFUSED") as never);
    logger.error({ message: "verdict not published", claim_id: "clm_2", detail: { code: "X" } });
    expect(lines).toEqual([
      "  [warn] claims-kernel  order source unreachable  claim_id=clm_1  attempts=3  error=Error: ECONNREFUSED",
      '  [error] claims-kernel  verdict not published  claim_id=clm_2  detail={"code":"X"}',
    ]);
    expect(logLine("x".repeat(5), [{ long: "y".repeat(300) }])).toHaveLength(5 + 2 + 5 + 200);
  });
});
