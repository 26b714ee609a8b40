// The reviewers' page (GET /review) and the live view of served claims (GET /reports, GET /reports/{id})
// driven in headless Chromium (Debian's, through playwright-core) against `claims serve` started as a child
// process: what a reviewer and an operator see and do, checked against the API's state afterwards.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext, Page, Response } from "playwright-core";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStripeWireMock } from "../adapters/payments/stripe-wire.test-kit.ts";
import type { MockPaymentBehaviour, StripeWireMock } from "../adapters/payments/stripe-wire.test-kit.ts";
import { randomBytes } from "node:crypto";
import { tokenSha256 } from "../functions/http/bearer.ts";
import { writeReviewers } from "../local/auth/reviewers.ts";
import { finalClaim, startServe } from "../local/serve-child.test-kit.ts";
import type { ServeChild } from "../local/serve-child.test-kit.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH, describeWithBrowser } from "./browser.test-kit.ts";

// Orders of scenarios/config.yaml (purchase dates relative to the server's clock): ord_016, ord_002 and ord_003
// are 1200 EUR electronics orders; the escalation limit is 500 EUR.
const CLAIMS = {
  approve: {
    order_id: "ord_016",
    amount_eur: 600,
    category: "electronics",
    reason: "Two of the three speakers arrived broken",
  },
  deny: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop never arrived" },
  balanceFirst: { order_id: "ord_003", amount_eur: 1200, category: "electronics", reason: "Screen cracked on arrival" },
  balanceSecond: { order_id: "ord_003", amount_eur: 300, category: "electronics", reason: "The charger is missing" },
  accept: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead on arrival" },
  window: { order_id: "ord_005", amount_eur: 500, category: "electronics", reason: "Stopped working" },
  category: { order_id: "ord_004", amount_eur: 50, category: "electronics", reason: "Not as described" },
};
const FREE_TEXT = "I want my money back for the kettle, 45 EUR, it leaks."; // no order id: NEEDS_REVIEW
const SIMULATION = "sim_served_demo";

// The project compiles without the DOM lib; these minimal shapes type what runs inside the page.
type El = {
  getBoundingClientRect(): { left: number; right: number; width: number };
  scrollWidth: number;
  clientWidth: number;
  textContent: string | null;
  getAttribute(n: string): string | null;
};
type Doc = { documentElement: El; querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El> };
// Functions passed to the page run there: they cannot call helpers of this file, so each reads `document` itself.

const ALICE = randomBytes(16).toString("hex");
const BOB = randomBytes(16).toString("hex");
let dataDir: string;
let shotDir: string;
let serve: ServeChild;
let browser: Browser;
const ids: Record<string, string> = {};

async function submit(name: string, body: Record<string, unknown>): Promise<string> {
  const res = await serve.api("POST", "/claims", body, { headers: { "idempotency-key": `pages-e2e-${name}` } });
  expect(res.status, name).toBe(202);
  ids[name] = res.body.claim_id as string;
  return ids[name]!;
}

/** A page that records CSP violations, page errors and every request it makes. */
async function openPage(context: BrowserContext, width = 1280) {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: 900 });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("request", (r) => requests.push(r.url()));
  return { page, problems, requests };
}

function expectSecurityHeaders(res: Response | null, connect: "'self'" | "'none'"): void {
  expect(res?.status()).toBe(200);
  const h = res!.headers();
  expect(h["content-type"]).toMatch(/^text\/html/);
  expect(h["x-content-type-options"]).toBe("nosniff");
  const csp = h["content-security-policy"] ?? "";
  expect(csp).toContain("default-src 'none'");
  expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
  expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
  expect(csp).toContain(`connect-src ${connect}`);
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "claims-pages-e2e-"));
  shotDir = process.env.CLAIMS_SCREENSHOT_DIR ?? join(dataDir, "screenshots");
  // Named reviewers: alice (the page's token) and bob, each recorded as themselves.
  const file = join(dataDir, "reviewers.yaml");
  writeReviewers(file, [
    { id: "alice", token_sha256: tokenSha256(ALICE) },
    { id: "bob", token_sha256: tokenSha256(BOB) },
  ]);
  serve = await startServe({ dataDir, reviewerToken: ALICE, args: ["--reviewers", file] });
  for (const [name, claim] of Object.entries(CLAIMS)) {
    await submit(name, { claim, label: `pages e2e: ${name}` });
    // balanceSecond must meet balanceFirst's open review on ord_003, whatever the machine's speed: decided in turn.
    if (name === "balanceFirst") await finalClaim(serve, ids[name]!);
  }
  await submit("text", { claim_text: FREE_TEXT });
  await submit("simAccept", {
    claim: { order_id: "ord_009", amount_eur: 500, category: "electronics", reason: "Broken hinge" },
    simulation_id: SIMULATION,
    label: "demo accept",
  });
  await submit("simReject", {
    claim: { order_id: "ord_007", amount_eur: 120, category: "clothing", reason: "Too small" },
    simulation_id: SIMULATION,
    label: "demo reject",
  });
  await Promise.all(Object.values(ids).map((id) => finalClaim(serve, id)));
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describeWithBrowser("the review page against claims serve", () => {
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let requests: string[];
  const card = (name: string) => page.locator(`article[data-claim-id="${ids[name]}"]`);

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    context = await browser.newContext();
    ({ page, problems, requests } = await openPage(context));
  });
  afterAll(() => context?.close());

  it("is served open, with its own policy, and refuses a wrong token with the API's answer", async () => {
    expectSecurityHeaders(await page.goto(`${serve.url}/review`), "'self'");
    await page.fill("#token", serve.apiToken); // the intake token is not a reviewer token
    await page.click("#login button[type=submit]");
    await page.locator("#login-msg.error").waitFor();
    expect(await page.textContent("#login-msg")).toMatch(/^403 FORBIDDEN/);
    expect(await page.isVisible("#login")).toBe(true);
    expect(await page.locator("article").count()).toBe(0);
  });

  it("lists every pending review with the claim, the verdict's reason and the kernel's checks, keeping the token for this tab only", async () => {
    await page.fill("#token", serve.reviewerToken);
    await page.click("#login button[type=submit]");
    await page.waitForFunction(() =>
      /shown\.$/.test(
        (globalThis as unknown as { document: Doc }).document.querySelector("#list-msg")?.textContent ?? "",
      ),
    );
    const pending = (await serve.api("GET", "/reviews?limit=200", undefined, { as: "reviewer" })).body.items as {
      claim_id: string;
      reason: string;
    }[];
    const shown = await page.$$eval("article", (as) => as.map((a) => a.getAttribute("data-claim-id")));
    expect(shown.sort()).toEqual(pending.map((r) => r.claim_id).sort());
    for (const name of ["approve", "deny", "balanceFirst", "balanceSecond", "text"]) expect(shown).toContain(ids[name]);

    const approve = card("approve");
    expect(await approve.getAttribute("data-origin")).toBe("ESCALATE");
    expect(await approve.locator("h2").textContent()).toBe("AMOUNT_ABOVE_LIMIT");
    expect(await approve.locator("p.reason").textContent()).toBe(
      pending.find((r) => r.claim_id === ids.approve)!.reason,
    );
    expect(await approve.locator("dd").allTextContents()).toEqual(
      expect.arrayContaining(["ord_016", "600.00 EUR", "Two of the three speakers arrived broken"]),
    );
    expect(await approve.locator('ul.checks li[data-layer="11"]').textContent()).toBe(
      "✗ 11 amount_limit → AMOUNT_ABOVE_LIMIT",
    );
    expect(await approve.locator("ul.checks .pass").count()).toBeGreaterThan(5);
    // The free-text claim went to review before the kernel: its words are shown, and no checks.
    expect(await card("text").locator("blockquote").textContent()).toBe(FREE_TEXT);
    expect(await card("text").locator("ul.checks").count()).toBe(0);
    expect(await card("text").locator('button[data-action="approve"]').count()).toBe(0);

    // sessionStorage: kept across a reload of this tab, absent from a new tab, never in localStorage.
    await page.reload();
    await card("approve").waitFor();
    const other = await context.newPage();
    await other.goto(`${serve.url}/review`);
    expect(await other.isVisible("#login")).toBe(true);
    expect(
      await other.evaluate(() => (globalThis as unknown as { localStorage: { length: number } }).localStorage.length),
    ).toBe(0);
    await other.close();
  });

  it("approves an escalated claim for less than proposed, and the API shows the refund", async () => {
    const approve = card("approve");
    // The facts a reviewer decides on: the order as the shop's data says, what was refunded on it.
    expect(await approve.locator("section.facts").textContent()).toMatch(/Refunded automatically/);
    await approve.locator('input[name="amount"]').fill("450");
    await approve.locator('button[data-action="approve"]').click();
    expect(await approve.locator(".msg.error").textContent()).toBe(
      "Write a note saying why less than proposed is approved.",
    );
    await approve.locator('textarea[name="note"]').fill("Half: the screen was scratched before");
    await approve.locator('button[data-action="approve"]').click();
    await approve.locator(".msg.ok").waitFor();
    expect(await approve.locator(".msg").textContent()).toMatch(
      /^APPROVED by alice: 450\.00 EUR refunded \(exe_[0-9a-f]+\)$/,
    );
    expect(await approve.locator("form").count()).toBe(0);

    const view = (await serve.api("GET", `/claims/${ids.approve}`)).body;
    expect(view.review).toMatchObject({ status: "APPROVED", decision: "APPROVE", reviewer: "alice", amount_eur: 450 });
    expect(view.executed).toBe(true);
    const refunds = serve
      .events()
      .filter((e) => e["detail-type"] === "RefundExecuted" && e.detail.claim_id === ids.approve);
    expect(refunds.map((e) => [e.detail.amount_eur, e.detail.approved_by])).toEqual([[450, "alice"]]);
  });

  it("asks for a note before denying, then denies with it", async () => {
    const deny = card("deny");
    await deny.locator('button[data-action="deny"]').click();
    expect(await deny.locator(".msg.error").textContent()).toBe("Write a note saying why the claim is denied.");
    expect((await serve.api("GET", `/claims/${ids.deny}`)).body.review.status).toBe("PENDING");

    await deny.locator('textarea[name="note"]').fill("Carrier confirms delivery with signature");
    await deny.locator('button[data-action="deny"]').click();
    await deny.locator(".msg.ok").waitFor();
    expect(await deny.locator(".msg").textContent()).toBe("DENIED by alice");
    const view = (await serve.api("GET", `/claims/${ids.deny}`)).body;
    expect(view.review).toMatchObject({
      status: "DENIED",
      decision: "DENY",
      reviewer: "alice",
      note: "Carrier confirms delivery with signature",
    });
    expect(view.executed).not.toBe(true);
  });

  it("shows the API's 409 when the order's balance is gone, and the review stays pending", async () => {
    // Another reviewer approves the second claim on ord_003 first: 300 of its 1200 EUR are refunded.
    const other = await serve.api(
      "POST",
      `/claims/${ids.balanceSecond}/review`,
      { decision: "APPROVE" },
      { token: BOB },
    );
    expect(other.status).toBe(200);
    await page.click("#refresh");
    await card("balanceSecond").waitFor({ state: "detached" });
    const first = card("balanceFirst");
    await first.locator('button[data-action="approve"]').click();
    await first.locator(".msg.error").waitFor();
    expect(await first.locator(".msg").textContent()).toMatch(/^409 EXCEEDS_REFUNDABLE_BALANCE: /);
    expect(await first.locator("form").count()).toBe(1); // still decidable: deny remains possible

    const view = (await serve.api("GET", `/claims/${ids.balanceFirst}`)).body;
    expect(view.review.status).toBe("PENDING");
    expect(view.executed).not.toBe(true);
    expect(
      serve.events().filter((e) => e["detail-type"] === "RefundExecuted" && e.detail.claim_id === ids.balanceFirst),
    ).toEqual([]);
  });

  it("resubmits a corrected claim from the form, which then runs through the pipeline", async () => {
    const text = card("text");
    await text.locator('input[name="order_id"]').fill("ord_008");
    await text.locator('input[name="amount_eur"]').fill("45");
    await text.locator('input[name="category"]').fill("home");
    await text.locator('input[name="reason"]').fill("The kettle leaks");
    await text.locator('button[data-action="resubmit"]').click();
    await text.locator(".msg.ok").waitFor();
    const child = /corrected claim (clm_\w+)$/.exec((await text.locator(".msg").textContent()) ?? "")?.[1];
    expect(child).toBeDefined();
    ids.corrected = child!;
    const view = await finalClaim(serve, child!);
    // A resubmitted claim is never refunded automatically: it waits for a person other than its resubmitter.
    expect(view).toMatchObject({
      parent_claim_id: ids.text,
      status: "DECIDED",
      verdict: "ESCALATE",
      reason_code: "RESUBMITTED_CLAIM",
    });
    expect((await serve.api("GET", `/claims/${ids.text}`)).body.review).toMatchObject({
      status: "RESUBMITTED",
      resubmitted_claim_id: child,
    });
  });

  it("loads nothing from anywhere else and runs without page errors or policy violations", async () => {
    await page.screenshot({ path: join(shotDir, "review-page.png"), fullPage: true });
    expect(statSync(join(shotDir, "review-page.png")).size).toBeGreaterThan(10_000);
    expect(requests.filter((r) => !r.startsWith(serve.url))).toEqual([]);
    expect(problems.filter((p) => !/status of (403|409)/.test(p))).toEqual([]);
  });
});

describeWithBrowser("the served-claims report against claims serve", () => {
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let requests: string[];
  const served = () =>
    Object.entries(ids)
      .filter(([name]) => !name.startsWith("sim"))
      .map(([, id]) => id);

  beforeAll(async () => {
    browser ??= await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    context = await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${serve.apiToken}` } });
    ({ page, problems, requests } = await openPage(context));
    if (!ids.corrected)
      ids.corrected = (
        await serve.api(
          "POST",
          `/claims/${ids.text}/review`,
          {
            decision: "RESUBMIT",
            claim: { order_id: "ord_008", amount_eur: 45, category: "home", reason: "The kettle leaks" },
          },
          { as: "reviewer" },
        )
      ).body.resubmitted_claim_id;
    await finalClaim(serve, ids.corrected!);
    expectSecurityHeaders(await page.goto(`${serve.url}/reports`), "'none'");
  });
  afterAll(() => context?.close());

  it("lists every claim sent without a simulation_id, with the verdicts the API gives, and no batch-run banners", async () => {
    const rows = await page.$$eval('section[data-group="served"] table.claims tbody tr', (trs) =>
      trs.map((tr) => [tr.getAttribute("data-claim-id"), tr.getAttribute("data-verdict")]),
    );
    expect(rows.map(([id]) => id).sort()).toEqual(served().sort());
    for (const [id, verdict] of rows) {
      const view = (await serve.api("GET", `/claims/${id}`)).body;
      expect(verdict, id!).toBe(view.verdict ?? view.status);
    }
    const text = (await page.textContent("main")) ?? "";
    for (const wrong of [
      "Run incomplete",
      "may have crashed",
      "No run configuration",
      "Agent unknown",
      "unknown simulation",
    ])
      expect(text).not.toContain(wrong);
    expect(await page.locator(".big.bad").count()).toBe(0);
    expect(await page.textContent('[data-summary="agents"]')).toBe("claims_agent_v1");
  });

  it("shows the reviews in the table and the decision cycles: the approval with its reviewer and amount", async () => {
    const row = page.locator(`tr[data-claim-id="${ids.approve}"]`);
    expect(await row.getAttribute("data-review")).toBe("APPROVE");
    expect(await row.locator("td.review").textContent()).toBe(
      "APPROVED by alice · 450.00 EURHalf: the screen was scratched before",
    );
    expect(await row.locator("td.money").nth(1).textContent()).toBe("450.00approved by alice");
    expect(await page.locator(`tr[data-claim-id="${ids.deny}"] td.review`).textContent()).toBe(
      "DENIED by aliceCarrier confirms delivery with signature",
    );
    expect(await page.locator(`tr[data-claim-id="${ids.balanceFirst}"]`).getAttribute("data-review")).toBe("PENDING");
    const cycle = page.locator(`details.cycle[data-claim-id="${ids.approve}"]`);
    await cycle.locator("summary").click();
    expect(await cycle.locator('[data-review="decided"]').getAttribute("data-decision")).toBe("APPROVE");
    expect(await cycle.locator('[data-step="review"]').textContent()).toMatch(
      /APPROVE by alice.*Approved amount450\.00 EUR/s,
    );
    expect(await cycle.textContent()).toContain("approved by alice");
  });

  it("keeps the claim table, money columns included, inside a 1280 px window", async () => {
    const fit = await page.evaluate(() => {
      const d = (globalThis as unknown as { document: Doc }).document;
      const table = d.querySelector("table.claims")!;
      const wrap = d.querySelector(".table-wrap")!;
      const heads = Array.from(d.querySelectorAll("table.claims thead th")).map(
        (th) => [th.textContent, th.getBoundingClientRect().right] as const,
      );
      return {
        right: table.getBoundingClientRect().right,
        viewport: d.documentElement.clientWidth,
        page: d.documentElement.scrollWidth,
        wrapScroll: wrap.scrollWidth - wrap.clientWidth,
        heads,
      };
    });
    expect(fit.viewport).toBe(1280);
    expect(fit.right).toBeLessThanOrEqual(1280);
    expect(fit.page).toBeLessThanOrEqual(1280);
    expect(fit.wrapScroll).toBe(0);
    expect(fit.heads.map(([t]) => t)).toEqual([
      "#",
      "Received (UTC)",
      "Claim",
      "Order",
      "Amount (EUR)",
      "Verdict · reason",
      "Review",
      "Refund (EUR)",
      "Decided in",
    ]);
    for (const [t, right] of fit.heads) expect(right, t!).toBeLessThanOrEqual(1280);
  });

  it("filters the table by verdict", async () => {
    const group = page.locator('section[data-group="served"]');
    const visible = () => group.locator("table.claims tbody tr:visible");
    const all = await visible().count();
    for (const verdict of ["REJECT", "ESCALATE", "ACCEPT"]) {
      await group.locator(`label[data-filter="${verdict}"]`).click();
      const shown = await visible().evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-verdict")));
      expect(shown.length, verdict).toBe(
        Number(await group.locator(`label[data-filter="${verdict}"] strong`).textContent()),
      );
      expect(new Set(shown)).toEqual(new Set([verdict]));
    }
    await group.locator('label[data-filter="all"]').click();
    expect(await visible().count()).toBe(all);
  });

  it("draws the verdict mix, the money per outcome and the decision times from the same claims", async () => {
    const group = page.locator('section[data-group="served"]');
    const rows = await group
      .locator("table.claims tbody tr")
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-verdict")));
    for (const verdict of ["ACCEPT", "ESCALATE", "REJECT"]) {
      const legend = await group
        .locator(`[data-chart="verdict-mix"] [data-legend="${verdict}"] text.value`)
        .textContent();
      expect(legend, verdict).toMatch(new RegExp(`^${rows.filter((v) => v === verdict).length} · `));
    }
    const money = async (key: string) =>
      Number(await group.locator(`[data-chart="money"] [data-money="${key}"]`).getAttribute("data-value"));
    expect(await money("refundedApproved")).toBe(450 + 300); // alice's 450 and bob's 300
    expect(await money("refundedAuto")).toBeCloseTo(299.99, 2); // the ACCEPT (the corrected kettle claim waits for a person)
    expect(await money("escalatedDenied")).toBe(1200 + 150); // the denial and what alice did not grant
    expect(await money("escalatedPending")).toBe(1200 + 45); // and the corrected kettle claim
    expect(await group.locator('[data-chart="decision-time"] rect[data-ms]').count()).toBe(rows.length);
  });

  it("renders screenshots at 1280 px that load nothing else and raise no errors", async () => {
    await page.screenshot({ path: join(shotDir, "served-report-top.png") });
    await page.screenshot({ path: join(shotDir, "served-report.png"), fullPage: true });
    expect(statSync(join(shotDir, "served-report.png")).size).toBeGreaterThan(30_000);
    expect(requests.filter((r) => !r.startsWith(serve.url))).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("shows claims sent with a simulation_id as their own group, without batch-run banners", async () => {
    const res = await page.goto(`${serve.url}/reports/${SIMULATION}`);
    expectSecurityHeaders(res, "'none'");
    expect(await page.getAttribute("section.group", "data-group")).toBe(SIMULATION);
    const rows = await page.$$eval("table.claims tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-claim-id")));
    expect(rows.sort()).toEqual([ids.simAccept, ids.simReject].sort());
    expect((await page.textContent("main")) ?? "").not.toMatch(/Run incomplete|No run configuration|Agent unknown/);
    await page.screenshot({ path: join(shotDir, "served-simulation.png"), fullPage: true });
  });
});

describeWithBrowser("the served report opened in a browser without a token", () => {
  let context: BrowserContext;

  beforeAll(async () => {
    browser ??= await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    context = await browser.newContext();
  });
  afterAll(() => context?.close());

  it("asks for the intake token, shows the API's error for a wrong one, and the report for the right one", async () => {
    const { page, problems, requests } = await openPage(context);
    const res = await page.goto(`${serve.url}/reports`);
    expectTokenPageHeaders(res);
    const first = (await res!.text()) ?? "";
    for (const id of Object.values(ids)) expect(first).not.toContain(id);
    await page.fill("#token", "not-the-intake-token");
    await page.click("button[type=submit]");
    await expect.poll(() => page.textContent("#msg")).toMatch(/403 FORBIDDEN/);
    await page.fill("#token", serve.apiToken);
    await page.click("button[type=submit]");
    await page.waitForSelector('section[data-group="served"] table.claims');
    const rows = await page.$$eval('section[data-group="served"] table.claims tbody tr', (trs) =>
      trs.map((tr) => tr.getAttribute("data-claim-id")),
    );
    expect(rows).toContain(ids.accept);
    // The token stays for the tab: a reload shows the report again without asking.
    await page.reload();
    await page.waitForSelector('section[data-group="served"] table.claims');
    await page.screenshot({ path: join(shotDir, "served-report-token-page.png") });
    expect(requests.filter((r) => !r.startsWith(serve.url))).toEqual([]);
    expect(problems.filter((p) => !/status of 403/.test(p))).toEqual([]);
    await page.close();
  });
});

/** The token page: HTML with its own policy, which may call the API on its own origin. */
function expectTokenPageHeaders(res: Response | null): void {
  expect(res?.status()).toBe(200);
  const h = res!.headers();
  expect(h["content-type"]).toMatch(/^text\/html/);
  expect(h["x-content-type-options"]).toBe("nosniff");
  const csp = h["content-security-policy"] ?? "";
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("connect-src 'self'");
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
}

describe("the review list the page reads", () => {
  it("keeps every field of docs/http-api.md and adds the claim, the proposal and the kernel's verdict id, layer and checks", async () => {
    const items = (await serve.api("GET", "/reviews?limit=200", undefined, { as: "reviewer" })).body.items as Record<
      string,
      unknown
    >[];
    const item = items.find((i) => i.claim_id === ids.balanceFirst)!;
    const view = (await serve.api("GET", `/claims/${ids.balanceFirst}`)).body;
    expect(item).toMatchObject({
      claim_id: ids.balanceFirst,
      dfid: view.dfid,
      origin: "ESCALATE",
      status: "PENDING",
      reason_code: "AMOUNT_ABOVE_LIMIT",
      reason: view.reason,
      order_id: "ord_003",
      amount_eur: 1200,
    });
    expect(item.review_id).toMatch(/^rev_[0-9a-f]{24}$/);
    expect(typeof item.requested_at).toBe("string");
    expect(item.claim).toEqual(CLAIMS.balanceFirst);
    expect(item.proposal).toEqual(view.proposal);
    const verdict = serve
      .events()
      .find((e) => e["detail-type"] === "ClaimVerdict" && e.detail.claim_id === ids.balanceFirst)!;
    expect(item).toMatchObject({ verdict: "ESCALATE", layer: 11, verdict_id: verdict.detail.verdict_id });
    const checks = item.checks as { layer: number; passed: boolean; reason_code?: string }[];
    expect(checks.at(-1)).toMatchObject({ layer: 11, passed: false, reason_code: "AMOUNT_ABOVE_LIMIT" });
    expect(checks.slice(0, -1).every((c) => c.passed)).toBe(true);
  });
});

describe("the served-claims report without a browser", () => {
  it("answers 400 for a bad limit and needs the intake token", async () => {
    expect((await serve.api("GET", "/reports?limit=0")).status).toBe(400);
    expect((await serve.api("GET", "/reports?limit=abc")).body.error.code).toBe("INVALID_QUERY");
    expect((await serve.api("GET", "/reports", undefined, { as: "reviewer" })).status).toBe(403);
    const one = await serve.api("GET", "/reports?limit=1");
    expect(one.status).toBe(200);
    expect(String(one.body).match(/<tr data-claim-id="/g)).toHaveLength(1);
  });
});

/**
 * The shop's order API as `ORDER_SOURCE=http` reads it (docs/orders.md), in this process: electronics bought three
 * days ago, in EUR, with the payment Stripe refunds.
 */
async function startOrderApi(
  token: string,
  orders: { order_id: string; amount: number; payment_ref?: string }[],
): Promise<{ url: string; close(): Promise<void> }> {
  const purchased = new Date(Date.now() - 3 * 86_400_000).toISOString();
  const server = createServer((req, res) => {
    const order = orders.find((o) => req.url === `/orders/${o.order_id}`);
    const status = req.headers.authorization !== `Bearer ${token}` ? 401 : order ? 200 : 404;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(
      JSON.stringify(
        order ? { ...order, purchase_date: purchased, category: "electronics", currency: "EUR" } : { error: status },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// Failed refunds on the review page: `claims serve` reading the shop's orders over HTTP and paying through Stripe — a
// MOCK of its wire format (adapters/payments/stripe-wire.test-kit.ts; no Stripe can run here) — where ord_001's refund stays pending until a
// signed `refund.failed` webhook, and the card behind ord_006 and ord_009 is declined until the test "replaces" it.
describeWithBrowser("failed refunds on the review page (Stripe mock)", () => {
  const KEY = "sk_test_review_page_0123456789";
  const SECRET = "whsec_review_page_test";
  const behaviours: Record<string, MockPaymentBehaviour> = {
    pi_later: { kind: "pending" },
    pi_declined: { kind: "card_declined" },
  };
  const failed: Record<string, string> = {};
  const SHOP_TOKEN = randomBytes(16).toString("hex");
  let mock: StripeWireMock;
  let shop: { url: string; close(): Promise<void> };
  let pay: ServeChild;
  let payDir: string;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let requests: string[];
  const card = (name: string) => page.locator(`article[data-claim-id="${failed[name]}"]`);
  const view = async (name: string) => (await pay.api("GET", `/claims/${failed[name]}`)).body;
  /** The claim's view once its refund answers `ok` (the executor and the webhook run beside the request). */
  type Refund = { status: string; provider_ref?: string; review?: { status: string } };
  async function refundOf(claimId: string, ok: (refund: Refund) => boolean) {
    let last: unknown;
    for (let wait = 20, tries = 0; tries < 400; tries++, wait = Math.min(500, wait * 2)) {
      const body = (await pay.api("GET", `/claims/${claimId}`)).body;
      last = body;
      if (body.refund && ok(body.refund)) return body;
      await sleep(wait);
    }
    throw new Error(`the refund of ${claimId} never got there; last answer: ${JSON.stringify(last)}`);
  }
  const executed = (claimId: string) =>
    pay.events().filter((e) => e["detail-type"] === "RefundExecuted" && e.detail.claim_id === claimId);

  beforeAll(async () => {
    mock = await startStripeWireMock(KEY, behaviours);
    payDir = mkdtempSync(join(tmpdir(), "claims-pages-refunds-"));
    shop = await startOrderApi(SHOP_TOKEN, [
      { order_id: "ord_001", amount: 299.99, payment_ref: "pi_later" },
      { order_id: "ord_006", amount: 299.99, payment_ref: "pi_declined" },
      { order_id: "ord_009", amount: 500, payment_ref: "pi_declined" },
      // An order the shop keeps without the payment: its refund cannot be paid, nor retried until the shop fixes it.
      { order_id: "ord_012", amount: 100 },
    ]);
    const file = join(payDir, "reviewers.yaml");
    writeReviewers(file, [
      { id: "alice", token_sha256: tokenSha256(ALICE) },
      { id: "bob", token_sha256: tokenSha256(BOB) },
    ]);
    pay = await startServe({
      dataDir: payDir,
      reviewerToken: ALICE,
      args: ["--reviewers", file],
      env: {
        ...{ ORDER_SOURCE: "http", ORDER_API_URL: shop.url, ORDER_API_TOKEN: SHOP_TOKEN },
        ...{
          PAYMENT_PROVIDER: "stripe",
          STRIPE_API_KEY: KEY,
          STRIPE_API_BASE: mock.base,
          STRIPE_WEBHOOK_SECRET: SECRET,
        },
      },
    });
    const claims = {
      webhook: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead on arrival" },
      declined: { order_id: "ord_006", amount_eur: 100, category: "electronics", reason: "The fan rattles" },
      raced: { order_id: "ord_009", amount_eur: 100, category: "electronics", reason: "Broken hinge" },
      noRef: { order_id: "ord_012", amount_eur: 50, category: "electronics", reason: "Arrived scratched" },
    };
    for (const [name, claim] of Object.entries(claims)) {
      const res = await pay.api(
        "POST",
        "/claims",
        { claim },
        { headers: { "idempotency-key": `pages-refund-${name}` } },
      );
      expect(res.status, name).toBe(202);
      failed[name] = res.body.claim_id as string;
      expect(await finalClaim(pay, failed[name]!)).toMatchObject({ verdict: "ACCEPT" });
    }
    // ord_001's refund is pending at Stripe, then Stripe says it failed (a signed webhook, as Stripe sends it).
    const pending = await refundOf(failed.webhook!, (r) => r.status === "PENDING");
    const metadata = { claim_id: failed.webhook, execution_id: executed(failed.webhook!)[0]!.detail.execution_id };
    const body = JSON.stringify({
      id: "evt_refund_failed_1",
      object: "event",
      type: "refund.failed",
      data: {
        object: {
          id: pending.refund.provider_ref,
          status: "failed",
          failure_reason: "expired_or_canceled_card",
          metadata,
        },
      },
    });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET });
    const hook = await fetch(`${pay.url}/webhooks/stripe`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature },
      body,
    });
    expect(hook.status).toBe(200);
    for (const name of Object.keys(claims)) await refundOf(failed[name]!, (r) => r.review?.status === "PENDING");

    browser ??= await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    context = await browser.newContext();
    ({ page, problems, requests } = await openPage(context));
    await page.goto(`${pay.url}/review`);
    await page.fill("#token", ALICE);
    await page.click("#login button[type=submit]");
    await page.waitForFunction(() =>
      /shown\.$/.test(
        (globalThis as unknown as { document: Doc }).document.querySelector("#list-msg")?.textContent ?? "",
      ),
    );
  }, 300_000);
  afterAll(async () => {
    await context?.close();
    await pay?.stop();
    await mock?.close();
    await shop?.close();
    if (payDir) rmSync(payDir, { recursive: true, force: true });
  });

  it("shows each failed refund's review with the execution, amount, provider ref and reason, offering retry and close", async () => {
    const listed = (await pay.api("GET", "/reviews?limit=200", undefined, { as: "reviewer" })).body.items as Record<
      string,
      unknown
    >[];
    const shown = await page.$$eval("article", (as) => as.map((a) => a.getAttribute("data-claim-id")));
    expect(shown).toEqual(listed.map((i) => i.claim_id)); // the soonest due first, as the API lists them
    expect([...shown].sort()).toEqual(Object.values(failed).sort());

    const webhook = card("webhook");
    const item = listed.find((i) => i.claim_id === failed.webhook)!;
    expect(item).toMatchObject({ origin: "REFUND_FAILED", provider: "stripe", provider_ref: "re_mock_1" });
    expect(await webhook.getAttribute("data-origin")).toBe("REFUND_FAILED");
    expect(await webhook.getAttribute("data-execution-id")).toBe(item.execution_id);
    expect(await webhook.locator("p.reason").textContent()).toBe(item.reason);
    expect(await webhook.locator("section.refund dd").allTextContents()).toEqual([
      String(item.execution_id),
      "299.99 EUR",
      "refund (cash)",
      "ord_001",
      "stripe",
      "re_mock_1",
      "expired_or_canceled_card",
    ]);
    // Declined before Stripe created a refund: no provider ref, Stripe's own words as the reason.
    const declined = card("declined");
    expect(await declined.locator("dd.provider-ref").textContent()).toBe("none (the provider created no refund)");
    expect(await declined.locator("dd.failure-reason").textContent()).toMatch(/card has expired/);
    await page.screenshot({ path: join(shotDir, "review-page-refunds.png"), fullPage: true });
    for (const name of ["webhook", "declined", "raced"]) {
      expect(
        await card(name)
          .locator("button")
          .evaluateAll((bs) => bs.map((b) => b.getAttribute("data-action"))),
      ).toEqual(["take", "retry", "close", "close-paid"]);
    }
  });

  it("offers no Retry for a refund whose order names no payment (it cannot succeed), says why, and closes it", async () => {
    const noRef = card("noRef");
    expect(await noRef.locator("button").evaluateAll((bs) => bs.map((b) => b.getAttribute("data-action")))).toEqual([
      "take",
      "close",
      "close-paid",
    ]);
    expect(await noRef.locator(".retry-blocked").textContent()).toBe(
      "Retry cannot succeed: order ord_012 has no payment_ref to refund: give it one in the shop, or close",
    );
    await noRef.locator('button[data-action="close-paid"]').click();
    expect(await noRef.locator(".msg.error").textContent()).toBe(
      "Write a note saying how the refund was paid (for example: refunded by bank transfer).",
    );
    await noRef.locator('textarea[name="note"]').fill("The shop lost the payment: refunded by hand");
    await noRef.locator('button[data-action="close-paid"]').click();
    await noRef.locator(".msg.ok").waitFor();
    expect(await noRef.locator(".msg").textContent()).toBe(
      "CLOSED by alice: closed as paid out of band, counted as refunded",
    );
    expect((await view("noRef")).refund.review).toMatchObject({
      status: "CLOSED",
      reviewer: "alice",
      paid_out_of_band: true,
    });
  });

  it("asks for a note before closing, then closes it unpaid: the reservation released, the order bound to a person", async () => {
    const webhook = card("webhook");
    await webhook.locator('button[data-action="close"]').click();
    expect(await webhook.locator(".msg.error").textContent()).toBe(
      "Write a note saying why the refund is closed unpaid (for example: refunded by bank transfer).",
    );
    expect((await view("webhook")).refund.review.status).toBe("PENDING");

    await webhook.locator('textarea[name="note"]').fill("Refunded by bank transfer");
    await webhook.locator('button[data-action="close"]').click();
    await webhook.locator(".msg.ok").waitFor();
    expect(await webhook.locator(".msg").textContent()).toBe(
      "CLOSED by alice: closed unpaid, the order's reservation released",
    );
    expect(await webhook.locator("form").count()).toBe(0);
    expect((await view("webhook")).refund).toMatchObject({
      status: "FAILED",
      review: { status: "CLOSED", decision: "CLOSE", reviewer: "alice", note: "Refunded by bank transfer" },
    });
    expect(executed(failed.webhook!)).toHaveLength(1); // nothing paid again
    // The reservation is released, but a person's CLOSE binds the order like a DENY (docs/reviews.md): a new claim on
    // ord_001 is never refunded automatically, it goes to a person.
    const again = await pay.api(
      "POST",
      "/claims",
      { claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead on arrival" } },
      { headers: { "idempotency-key": "pages-refund-again" } },
    );
    expect(await finalClaim(pay, again.body.claim_id as string)).toMatchObject({
      verdict: "ESCALATE",
      reason_code: "PRIOR_DECISION_ON_ORDER",
    });
    // The person decides it (here: no second refund), so the desk is empty again for the tests below.
    const denied = await pay.api(
      "POST",
      `/claims/${again.body.claim_id as string}/review`,
      { decision: "DENY", note: "Already handled by bank transfer" },
      { token: ALICE },
    );
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
  });

  it("retries a declined refund once the card is replaced: a new execution, paid once under its own key", async () => {
    behaviours.pi_declined = { kind: "succeeded" }; // the customer's card was replaced
    const declined = card("declined");
    const before = (await view("declined")).refund.review;
    await declined.locator('button[data-action="retry"]').click();
    await declined.locator(".msg.ok").waitFor();
    const text = (await declined.locator(".msg").textContent()) ?? "";
    const retry = /^RETRIED by alice: paid again as (exe_\S+)$/.exec(text)?.[1];
    expect(retry, text).toBeDefined();

    const after = await refundOf(failed.declined!, (r) => r.status === "SETTLED");
    expect(after.refund.review).toMatchObject({
      review_id: before.review_id,
      status: "RETRIED",
      decision: "RETRY",
      reviewer: "alice",
      retry_execution_id: retry,
    });
    const runs = executed(failed.declined!).map((e) => [e.detail.execution_id, e.detail.retry_of]);
    expect(runs).toEqual([
      [expect.any(String), undefined],
      [retry, runs[0]![0]],
    ]);
    const paid = mock.requests.filter((r) => r.idempotencyKey === retry);
    expect(paid.length).toBeGreaterThan(0);
    expect(
      mock.refunds.filter((r) => (r.metadata as Record<string, string>)?.claim_id === failed.declined),
    ).toHaveLength(1);
  });

  it("shows the API's 409 when another reviewer decided first, and leaves that decision as it is", async () => {
    const bob = await pay.api("POST", `/claims/${failed.raced}/review`, { decision: "RETRY" }, { token: BOB });
    expect(bob.status).toBe(200);
    const raced = card("raced"); // still shown as pending: the page has not been refreshed
    await raced.locator('textarea[name="note"]').fill("Paid by hand");
    await raced.locator('button[data-action="close"]').click();
    await raced.locator(".msg.error").waitFor();
    expect(await raced.locator(".msg").textContent()).toMatch(/^409 REVIEW_ALREADY_DECIDED: /);
    expect(await raced.locator("form").count()).toBe(1);
    expect((await view("raced")).refund.review).toMatchObject({
      status: "RETRIED",
      decision: "RETRY",
      reviewer: "bob",
    });

    await page.click("#refresh");
    await page.waitForFunction(() =>
      /^No pending reviews\.$/.test(
        (globalThis as unknown as { document: Doc }).document.querySelector("#list-msg")?.textContent ?? "",
      ),
    );
    expect(requests.filter((r) => !r.startsWith(pay.url))).toEqual([]);
    expect(problems.filter((p) => !/status of 409/.test(p))).toEqual([]);
  });
});

// The desk with two reviewers in two browsers at once (docs/reviews.md#the-desk): each sees who they are, alice
// takes one review and bob sees it held; bob's decision on it is refused (409 TAKEN_BY) and he takes and decides
// another; alice decides hers. The checks show the failing ones first, the passing ones folded.
describeWithBrowser("two reviewers taking and deciding at the desk", () => {
  const desk: Record<string, string> = {};
  let contexts: BrowserContext[] = [];
  let alice: Page;
  let bob: Page;
  const issues: string[] = [];

  async function signIn(token: string): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const { page, problems } = await openPage(context);
    page.on("close", () => issues.push(...problems));
    await page.goto(`${serve.url}/review`);
    await page.fill("#token", token);
    await page.click("#login button[type=submit]");
    await page.waitForFunction(() =>
      / shown\.$/.test(
        (globalThis as unknown as { document: Doc }).document.querySelector("#list-msg")?.textContent ?? "",
      ),
    );
    return page;
  }
  const cardOf = (page: Page, name: string) => page.locator(`article[data-claim-id="${desk[name]}"]`);

  beforeAll(async () => {
    // ord_020: 1200 EUR. A 700 EUR claim escalates (above 500); a 300 EUR one after it waits for that review.
    for (const [name, claim] of Object.entries({
      first: { order_id: "ord_020", amount_eur: 700, category: "electronics", reason: "The screen flickers" },
      second: { order_id: "ord_020", amount_eur: 300, category: "electronics", reason: "The stand is bent" },
    })) {
      const res = await serve.api("POST", "/claims", { claim }, { headers: { "idempotency-key": `desk-${name}` } });
      desk[name] = res.body.claim_id as string;
      expect(await finalClaim(serve, desk[name]!)).toMatchObject({ verdict: "ESCALATE" });
    }
    browser ??= await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    alice = await signIn(ALICE);
    bob = await signIn(BOB);
  }, 300_000);
  afterAll(async () => {
    for (const c of contexts) await c.close();
    contexts = [];
  });

  it("tells each reviewer who they are", async () => {
    expect(await alice.textContent("#whoami")).toBe("Signed in as alice · no approval limit of your own");
    expect(await bob.textContent("#whoami")).toBe("Signed in as bob · no approval limit of your own");
  });

  it("shows the checks in run order, the failing ones first and the passing ones folded", async () => {
    const card = cardOf(alice, "first");
    const failing = await card.locator("ul.checks.failing li").evaluateAll((ls) => ls.map((l) => l.textContent));
    expect(failing).toHaveLength(1);
    expect(failing[0]).toMatch(/✗ .*AMOUNT_ABOVE_LIMIT/);
    const folded = card.locator("details.passed-checks");
    expect(await folded.getAttribute("open")).toBeNull();
    const passed = await folded.locator("li").evaluateAll((ls) => ls.map((l) => l.textContent));
    // In the order the kernel ran them (the API's `checks`), the failing one left out.
    const listed = (await serve.api("GET", "/reviews?limit=200", undefined, { as: "reviewer" })).body.items as {
      claim_id: string;
      checks: { passed: boolean; name: string }[];
    }[];
    const run = listed.find((i) => i.claim_id === desk.first)!.checks;
    expect(passed.map((t) => /^✓ \S+ (\S+)/.exec(t ?? "")?.[1])).toEqual(
      run.filter((c) => c.passed).map((c) => c.name),
    );
    expect(passed.length).toBeGreaterThan(5);
    expect(await folded.locator("summary").textContent()).toBe(`${passed.length} checks passed`);
    expect(await card.locator(".due").textContent()).toMatch(/^due \d{4}-\d\d-\d\dT/);
  });

  it("lets alice take a review: bob sees it held and his decision on it is refused with 409 TAKEN_BY", async () => {
    const mine = cardOf(alice, "first");
    await mine.locator('button[data-action="take"]').click();
    await mine.locator(".msg.ok").waitFor();
    expect(await mine.locator(".holder").textContent()).toMatch(/^taken by you until \d{4}-/);

    await bob.click("#refresh");
    await bob.waitForFunction(() =>
      / shown\.$/.test(
        (globalThis as unknown as { document: Doc }).document.querySelector("#list-msg")?.textContent ?? "",
      ),
    );
    const held = cardOf(bob, "first");
    expect(await held.getAttribute("data-taken-by")).toBe("alice");
    expect(await held.locator(".holder").textContent()).toMatch(/^taken by alice until \d{4}-/);
    await held.locator('textarea[name="note"]').fill("Looks like a duplicate");
    await held.locator('button[data-action="deny"]').click();
    await held.locator(".msg.error").waitFor();
    expect(await held.locator(".msg").textContent()).toMatch(/^409 TAKEN_BY: review rev_\w+ is taken by alice until /);
    expect((await serve.api("GET", `/claims/${desk.first}`)).body.review.status).toBe("PENDING");
    // Bob's own take of it is refused too.
    await held.locator('button[data-action="take"]').click();
    await held.locator(".msg.error").waitFor();
    expect(await held.locator(".msg").textContent()).toMatch(/^409 TAKEN_BY/);
  });

  it("lets bob take and approve the other review, and alice decide hers", async () => {
    const other = cardOf(bob, "second");
    await other.locator('button[data-action="take"]').click();
    await other.locator(".msg.ok").waitFor();
    await other.locator('button[data-action="approve"]').click();
    await other.locator(".msg.ok").waitFor();
    expect(await other.locator(".msg").textContent()).toMatch(/^APPROVED by bob: 300\.00 EUR refunded \(exe_\w+\)$/);
    expect(await other.locator('[data-action="take"]').count()).toBe(0);

    const mine = cardOf(alice, "first");
    await mine.locator('button[data-action="approve"]').click();
    await mine.locator(".msg.ok").waitFor();
    expect(await mine.locator(".msg").textContent()).toMatch(/^APPROVED by alice: 700\.00 EUR refunded/);

    const views = await Promise.all(["first", "second"].map((n) => serve.api("GET", `/claims/${desk[n]}`)));
    expect(views.map((v) => [v.body.review.status, v.body.review.reviewer, v.body.review.amount_eur])).toEqual([
      ["APPROVED", "alice", 700],
      ["APPROVED", "bob", 300],
    ]);
    await alice.screenshot({ path: join(shotDir, "review-desk-alice.png"), fullPage: true });
    await alice.close();
    await bob.close();
    expect(issues.filter((p) => !/status of 409/.test(p))).toEqual([]);
  });
});
