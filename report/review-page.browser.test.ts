// The review page (GET /review) in headless Chromium on listing items built by the real code (the order's facts by
// core/kernel/review-facts.ts, a failed credit's review by pipeline/refund-review.ts), the API stubbed by the browser:
// a reviewer sees the order's lines by their titles, what the claim asks (store credit), and that a failed
// execution issues store credit with its bonus, not cash (issue 33, docs/reviews.md#what-a-reviewer-sees).
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Order } from "../core/integrity/contracts.ts";
import { reviewFacts } from "../core/kernel/review-facts.ts";
import type { SettlementRecord } from "../core/kernel/settlement.ts";
import { refundReviewListItem } from "../pipeline/refund-review.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH, describeWithBrowser } from "./browser.test-kit.ts";
import { renderReviewPage } from "./review-page.ts";

const ORIGIN = "http://claims.test";
const AT = "2026-12-01T10:00:00.000Z";
const order = {
  order_id: "ord_032",
  purchase_date: "2026-11-20",
  currency: "USD",
  lines: [
    { line_id: "l1", title: "55-inch TV", sku: "TV-55", category: "electronics", quantity: 1, amount: "450.00" },
    { line_id: "l2", title: "Cotton T-Shirt", sku: "TEE-M", category: "clothing", quantity: 2, amount: "80.00" },
  ],
} as unknown as Order;
const escalated = {
  review_id: "rev_lines",
  claim_id: "clm_lines",
  origin: "ESCALATE",
  status: "PENDING",
  reason_code: "AMOUNT_ABOVE_LIMIT",
  reason: "above the limit",
  order_id: "ord_032",
  amount: { value: "450.00", currency: "USD" },
  requested_at: AT,
  claim: {
    order_id: "ord_032",
    amount_eur: 450,
    currency: "usd",
    category: "electronics",
    reason: "The TV arrived cracked",
    purchase_date: "2026-11-20",
    outcome: "STORE_CREDIT",
  },
  approvals: [],
  ...reviewFacts({ order, others: [] }),
};
const failedCredit: SettlementRecord = {
  claim_id: "clm_credit",
  dfid: "dfid_credit",
  order_id: "ord_060",
  amount_eur: 80,
  verdict_id: "vrd_credit",
  provider: "stripe",
  execution_id: "exe_credit",
  status: "FAILED",
  failure_reason: "the customer has no Stripe customer",
  requested_at: AT,
  updated_at: AT,
  attempts: [],
  review: {
    review_id: "rev_credit",
    origin: "REFUND_FAILED",
    execution_id: "exe_credit",
    status: "PENDING",
    reason_code: "REFUND_FAILED",
    reason: "the provider refused it",
    requested_at: AT,
  },
  outcome: "STORE_CREDIT",
  bonus_minor: 800,
  bonus_pct: 10,
  version: 1,
};

describeWithBrowser("the review page's outcomes and order lines", () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    page = await browser.newPage();
    await page.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === "/review")
        return route.fulfill({ status: 200, contentType: "text/html", body: renderReviewPage() });
      if (url.pathname === "/reviews")
        return route.fulfill({
          status: 200,
          contentType: "application/json",
          body: JSON.stringify({
            reviewer: { id: "alice" },
            items: [escalated, { ...refundReviewListItem(failedCredit), approvals: [] }],
          }),
        });
      return route.fulfill({ status: 404, contentType: "application/json", body: "{}" });
    });
    await page.goto(`${ORIGIN}/review`);
    await page.fill("#token", "a-reviewer-token");
    await page.click('#login button[type="submit"]');
    await page.locator('article[data-claim-id="clm_credit"]').waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("lists the order's lines by their titles, each with its sku, category, quantity and amount", async () => {
    const lines = page.locator('article[data-claim-id="clm_lines"] ul.order-lines li');
    expect(await lines.allTextContents()).toEqual([
      "55-inch TV · TV-55 · electronics · 1 × · 450.00 USD",
      "Cotton T-Shirt · TEE-M · clothing · 2 × · 80.00 USD",
    ]);
    expect(await lines.evaluateAll((els) => els.map((e) => e.getAttribute("data-line")))).toEqual(["l1", "l2"]);
  });

  it("says what the claim asks for: store credit", async () => {
    expect(await page.locator('article[data-claim-id="clm_lines"] dd.outcome').textContent()).toBe("store credit");
  });

  it("says a failed execution issues store credit with its bonus, not cash", async () => {
    expect(await page.locator('article[data-claim-id="clm_credit"] section.refund dd.outcome').textContent()).toBe(
      "store credit with a 10% bonus (8.00 EUR) on top",
    );
  });
});
