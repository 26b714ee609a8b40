// `claims reconcile` labels store credit apart from cash (issue 33, docs/returns.md#outcomes): a credit is no money
// paid back, so the cash totals never count it, each credit says so on its line, and its retry stays credit.
import { describe, expect, it } from "vitest";
import { cashAndCredit, creditExecutions, settlementFacts } from "./reconcile.ts";
import { reconcileJournal } from "./reconcile.test-kit.ts";

/** The stdout of `claims reconcile`, which these journals always pass (exit 0). */
async function reconcile(lines: unknown[], args: string[] = []): Promise<string> {
  const { code, stdout } = await reconcileJournal(lines, args);
  expect(code, stdout).toBe(0);
  return stdout;
}

const now = new Date().toISOString();
const CREDIT = { bonus: { value: "8.00", currency: "EUR" }, bonus_pct: 10 };
const executed = (id: string, value: string, extra: Record<string, unknown> = {}) => ({
  "detail-type": "RefundExecuted",
  time: now,
  detail: {
    execution_id: id,
    claim_id: `clm_${id}`,
    dfid: "d",
    order_id: "o",
    amount: { value, currency: "EUR" },
    verdict_id: "v",
    ...extra,
  },
});
const settled = (id: string, type = "RefundSettled") => ({
  "detail-type": type,
  time: now,
  detail: { execution_id: id, claim_id: `clm_${id}`, provider: "stripe" },
});

const journal = [
  executed("cash1", "50.00"),
  settled("cash1"),
  executed("cred1", "80.00", { credit: CREDIT }),
  settled("cred1"),
  executed("cred2", "30.00", { credit: CREDIT }),
  settled("cred2", "RefundFailed"),
  // The RETRY of a failed credit carries no `credit` of its own here: it is still credit.
  executed("cred3", "30.00", { retry_of: "cred2" }),
  settled("cred3"),
];

describe("claims reconcile with store credit", () => {
  it("totals cash without the credits, and the credits apart", () => {
    const credit = creditExecutions(journal);
    expect([...credit].sort()).toEqual(["cred1", "cred2", "cred3"]);
    const split = cashAndCredit(settlementFacts(journal), credit);
    expect(split.totals).toEqual({ settled_eur: 50, pending_eur: 0, failed_eur: 0 });
    expect(split.credit).toEqual({ count: 2, totals: { settled_eur: 110, pending_eur: 0, failed_eur: 0 } });
  });

  it("has no credit part when nothing issued credit", () => {
    const cashOnly = journal.slice(0, 2);
    expect(cashAndCredit(settlementFacts(cashOnly), creditExecutions(cashOnly))).toEqual({
      totals: { settled_eur: 50, pending_eur: 0, failed_eur: 0 },
    });
  });

  it("labels each credit on its line and says the credit totals apart from the cash ones", async () => {
    const lines = (await reconcile(journal)).trimEnd().split("\n");
    expect(lines).toEqual([
      "SETTLED  clm_cash1 cash1 50.00 EUR",
      "SETTLED  clm_cred1 cred1 80.00 EUR store credit",
      "SETTLED  clm_cred3 cred3 30.00 EUR store credit",
      "1 refunds: settled 50.00 EUR, pending 0.00 EUR, failed 0.00 EUR; store credit, not cash (2, its base without the bonus): settled 110.00 EUR, pending 0.00 EUR, failed 0.00 EUR",
    ]);
  });

  it("--json marks each credit STORE_CREDIT and keeps its totals out of the cash totals", async () => {
    const out = JSON.parse(await reconcile(journal, ["--json"])) as Record<string, unknown>;
    expect(out.refunds).toEqual([
      expect.not.objectContaining({ outcome: expect.anything() }),
      expect.objectContaining({ execution_id: "cred1", outcome: "STORE_CREDIT" }),
      expect.objectContaining({ execution_id: "cred3", outcome: "STORE_CREDIT" }),
    ]);
    expect(out.totals).toEqual({ settled_eur: 50, pending_eur: 0, failed_eur: 0 });
    expect(out.credit).toEqual({ count: 2, totals: { settled_eur: 110, pending_eur: 0, failed_eur: 0 } });
  });
});
