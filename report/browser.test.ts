// The written report opened in headless Chromium (Debian's, driven by playwright-core): what a reader sees.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH, describeWithBrowser } from "./browser.test-kit.ts";
import { buildFixtureEvents } from "./fixture.test-kit.ts";
import { writeReport } from "../cli/report-file.ts";

const BADGE_TEXT: Record<string, string> = {
  ACCEPT: "ACCEPT",
  ESCALATE: "ESCALATE",
  REJECT: "REJECT",
  NEEDS_REVIEW: "NEEDS REVIEW",
};
// The badge colours of the dark theme (styles.ts): green, amber, red, purple.
const BADGE_COLOUR: Record<string, string> = {
  ACCEPT: "rgb(63, 185, 80)",
  ESCALATE: "rgb(227, 179, 65)",
  REJECT: "rgb(255, 123, 114)",
  NEEDS_REVIEW: "rgb(210, 168, 255)",
};

// The project compiles without the DOM lib; these minimal shapes type the code that runs inside the page.
type PageWindow = {
  getComputedStyle(el: unknown): { color: string };
  document: { getElementById(id: string): { open?: boolean } | null };
};
type Details = { open: boolean };

let dir: string;
let events: AuditEvent[];
let url: string;
let browser: Browser;
let page: Page;
const requests: string[] = [];
const pageErrors: string[] = [];

/** Each claim's expected and actual outcome, straight from the events. */
function expectations(): Map<string, { verdict: string; expected: string; scenario: string }> {
  const end = events.find((e) => e.event_type === "SIMULATION_END")!;
  const out = new Map<string, { verdict: string; expected: string; scenario: string }>();
  for (const r of end.details.results as { id: string; claim_id: string; expected: string }[]) {
    const verdict = events.find((e) => e.event_type === "KERNEL_VERDICT" && e.details.claim_id === r.claim_id)?.details
      .verdict;
    const review = events.some((e) => e.event_type === "CLAIM_NEEDS_REVIEW" && e.details.claim_id === r.claim_id);
    out.set(r.claim_id, {
      verdict: typeof verdict === "string" ? verdict : review ? "NEEDS_REVIEW" : "PENDING",
      expected: r.expected,
      scenario: r.id,
    });
  }
  return out;
}

describeWithBrowser("the report in Chromium", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "claims-report-browser-"));
    events = await buildFixtureEvents();
    url = pathToFileURL(writeReport(events, join(dir, "report.html"))).href;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("request", (r) => requests.push(r.url()));
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await page.goto(url);
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("shows every claim of the run in the trace with its verdict badge, colour and expected value", async () => {
    const rows = await page.$$eval("#trace tbody tr", (trs) =>
      trs.map((tr) => {
        const badge = tr.querySelector(".badge");
        const cells = tr.querySelectorAll("td");
        return {
          claimId: tr.querySelector("td.claim a")?.textContent?.trim() ?? "",
          badge: badge?.textContent?.trim() ?? "",
          colour: (globalThis as unknown as PageWindow).getComputedStyle(badge).color,
          expected: tr.querySelector("td.expected")?.textContent?.trim() ?? "",
          mark: cells[7]?.textContent?.trim() ?? "",
          scenario: tr.querySelector("td.scenario .mono")?.textContent?.trim() ?? "",
        };
      }),
    );
    const want = expectations();
    expect(rows.map((r) => r.claimId).sort()).toEqual([...want.keys()].sort());
    for (const row of rows) {
      const w = want.get(row.claimId)!;
      expect(row.badge, row.claimId).toBe(BADGE_TEXT[w.verdict]);
      expect(row.colour, row.claimId).toBe(BADGE_COLOUR[w.verdict]);
      expect(row.expected.split(" · ")[0], row.claimId).toBe(w.expected);
      expect(row.scenario).toBe(w.scenario);
      expect(row.mark).toBe(w.verdict === w.expected ? "✓" : "✗");
    }
  });

  it("shows summary counts that agree with SIMULATION_END and with the trace", async () => {
    const end = events.find((e) => e.event_type === "SIMULATION_END")!;
    expect(await page.textContent('[data-summary="matched"]')).toBe(String(end.details.matched));
    expect(await page.textContent('[data-summary="total"]')).toBe(String(end.details.total));
    const verdicts = await page.$$eval("#trace tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-verdict")));
    for (const outcome of ["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW"]) {
      expect(await page.textContent(`[data-count="${outcome}"] strong`), outcome).toBe(
        String(verdicts.filter((v) => v === outcome).length),
      );
    }
  });

  it("opens a closed decision cycle on click and shows its kernel layers", async () => {
    const cycle = page.locator("details.cycle").nth(2);
    expect(await cycle.evaluate((d) => (d as unknown as Details).open)).toBe(false);
    expect(await cycle.locator("ul.layers").isVisible()).toBe(false);
    await cycle.locator("summary").click();
    expect(await cycle.evaluate((d) => (d as unknown as Details).open)).toBe(true);
    expect(await cycle.locator("ul.layers").isVisible()).toBe(true);
    expect(await cycle.locator("li[data-deciding=true]").count()).toBe(1);
  });

  it("opens a claim's decision cycle from its link in the trace", async () => {
    const link = page.locator("#trace tbody tr").nth(5).locator("a");
    const target = (await link.getAttribute("href"))!.slice(1);
    await link.click();
    await page.waitForFunction(
      (id) => (globalThis as unknown as PageWindow).document.getElementById(id)?.open === true,
      target,
    );
    expect(await page.locator(`[id="${target}"] ol.steps`).isVisible()).toBe(true);
  });

  it("loads nothing but the file itself and runs without page errors", async () => {
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((r) => r !== url)).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("renders a screenshot of the whole page", async () => {
    const shot = join(dir, "report.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
  });
});
