// The served view: claims sent to the API, grouped by simulation_id, read right without a batch around them.
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { buildFixtureEvents } from "./fixture.test-kit.ts";
import { REPORT_CSP, renderReport } from "./render.ts";
import { REVIEW_PAGE_CSP, renderReviewPage } from "./review-page.ts";
import { renderAuditReport, renderServedReport } from "./served.ts";

/** The fixture run's claim events as `claims serve` would record them: no SIMULATION_START / END, no simulation_id. */
function asServed(events: readonly AuditEvent[], simulationId?: (e: AuditEvent) => string | undefined): AuditEvent[] {
  return events
    .filter((e) => !e.event_type.startsWith("SIMULATION_"))
    .map((e) => {
      const details = { ...e.details };
      delete details.simulation_id;
      const sim = simulationId?.(e);
      return { ...e, details: sim === undefined ? details : { ...details, simulation_id: sim } };
    });
}

const rowsOf = (page: string) =>
  [...page.matchAll(/<tr data-claim-id="([^"]*)" data-verdict="([^"]*)" data-review="([^"]*)"/g)].map((m) => ({
    claimId: m[1]!,
    verdict: m[2]!,
    review: m[3]!,
  }));
const groupsOf = (page: string) =>
  [...page.matchAll(/<section class="group" id="[^"]+" data-group="([^"]+)"/g)].map((m) => m[1]);
const claimIds = (events: readonly AuditEvent[]) => [
  ...new Set(events.filter((e) => e.event_type === "CLAIM_RECEIVED").map((e) => e.details.claim_id as string)),
];

let events: AuditEvent[];
let served: AuditEvent[];
let page: string;

beforeAll(async () => {
  events = await buildFixtureEvents({
    reviews: [{ scenario: "B", decision: { decision: "APPROVE", amount_eur: 700, reviewer: "alice", note: "part" } }],
  });
  served = asServed(events);
  page = renderServedReport(served);
});

describe("renderServedReport", () => {
  it("gives every served claim one row with its outcome and review, newest first, in one 'served claims' group", () => {
    expect(groupsOf(page)).toEqual(["served"]);
    const rows = rowsOf(page);
    expect(rows.map((r) => r.claimId)).toEqual(claimIds(served).reverse());
    const verdicts = new Map(
      served.filter((e) => e.event_type === "KERNEL_VERDICT").map((e) => [e.details.claim_id, e.details.verdict]),
    );
    for (const r of rows) expect(r.verdict, r.claimId).toBe(verdicts.get(r.claimId) ?? "NEEDS_REVIEW");
    const approved = served.find((e) => e.event_type === "REVIEW_DECIDED")!.details.claim_id;
    expect(rows.find((r) => r.claimId === approved)?.review).toBe("APPROVE");
    expect(rows.filter((r) => r.review === "PENDING").length).toBe(
      served.filter((e) => e.event_type === "REVIEW_REQUESTED").length - 1,
    );
  });

  it("shows the shadow policy's verdict per claim when one was recorded, and no such column otherwise", async () => {
    expect(page).not.toContain("Shadow policy");
    // A shadow limit of 100 EUR: the live ACCEPTs above it escalate under the shadow policy.
    const shadowed = asServed(await buildFixtureEvents({ shadowContract: { max_refund_without_escalation: 100 } }));
    const withShadow = renderServedReport(shadowed);
    expect(withShadow).toContain("<th>Shadow policy</th>");
    const cells = [...withShadow.matchAll(/<tr data-claim-id="([^"]*)" data-verdict="([^"]*)"[\s\S]*?<\/tr>/g)].map(
      (m) => ({
        claimId: m[1]!,
        verdict: m[2]!,
        shadow: /data-shadow="([A-Z]+)" data-agrees="(true|false)"/.exec(m[0]),
      }),
    );
    const recorded = new Map(
      shadowed
        .filter((e) => e.event_type === "KERNEL_VERDICT")
        .map((e) => [e.details.claim_id, e.details.shadow as { verdict: string; agrees: boolean }]),
    );
    expect(cells.length).toBe(claimIds(shadowed).length);
    for (const c of cells) {
      const s = recorded.get(c.claimId);
      expect(c.shadow?.slice(1, 3), c.claimId).toEqual(s ? [s.verdict, String(s.agrees)] : undefined);
    }
    expect(cells.some((c) => c.shadow?.[1] === "ESCALATE" && c.verdict === "ACCEPT" && c.shadow[2] === "false")).toBe(
      true,
    );
  });

  it("never reads like a crashed batch: no run banners, no 0 / 0, no unknown agent", () => {
    for (const wrong of ["Run incomplete", "may have crashed", "No run configuration", "Agent", "unknown"]) {
      if (wrong === "Agent") expect(page).toMatch(/data-summary="agents">claims_agent_v1</);
      else expect(page).not.toContain(wrong);
    }
    expect(page).not.toMatch(/data-banner=|class="big bad"/);
    expect(page).toContain(`data-summary="claims">${claimIds(served).length}<`);
  });

  it("links each row to its decision cycle, with unique anchors across groups", () => {
    const mixed = asServed(events, (e) =>
      ["clm_000001", "clm_000002", "clm_000003"].includes(String(e.details.claim_id)) ? undefined : "sim_demo",
    );
    const out = renderServedReport(mixed);
    expect(groupsOf(out)).toEqual(["served", "sim_demo"]);
    const links = [...out.matchAll(/<td class="claim"><a class="mono" href="#([^"]+)">/g)].map((m) => m[1]);
    const anchors = [...out.matchAll(/<details class="cycle" id="([^"]+)"/g)].map((m) => m[1]);
    expect(links).toHaveLength(claimIds(mixed).length);
    expect(new Set(anchors).size).toBe(anchors.length);
    expect([...links].sort()).toEqual([...anchors].sort());
  });

  it("says there are no claims yet instead of showing an empty run", () => {
    const out = renderServedReport([]);
    expect(out).toContain('data-empty="true"');
    expect(out).not.toContain("<details");
    expect(out).not.toMatch(/Run incomplete|No run configuration/);
  });

  it("measures the decision time from receipt to verdict, and shows the median", () => {
    const target = "clm_000001";
    const shifted = served.map((e) =>
      e.event_type === "KERNEL_VERDICT" && e.details.claim_id === target
        ? { ...e, details: { ...e.details, decided_at: "2026-03-10T09:00:02.500Z" } }
        : e,
    );
    const out = renderServedReport(shifted);
    expect(out).toContain(`data-claim-id="${target}" data-ms="2500"`);
    expect(out).toMatch(/<td class="num">2\.5 s<\/td>/);
    expect(out).toContain('data-median-ms="0"');
    expect(page).toContain("All decided at the instant they arrived (a fixed clock).");
  });

  it("escapes what customers and callers wrote in the table too", () => {
    const evil = `<img src=x onerror=alert(1)>"`;
    const tampered = served.map((e) =>
      e.event_type === "KERNEL_VERDICT" ? { ...e, details: { ...e.details, reason: evil, order_id: evil } } : e,
    );
    const out = renderServedReport(tampered);
    expect(out).not.toContain("<img");
    expect(out).toContain("&lt;img src=x onerror=alert(1)&gt;&quot;");
  });

  it("is deterministic: the same events give the same bytes", () => {
    expect(renderServedReport(served)).toBe(page);
    expect(renderServedReport(served, { generatedAt: "2026-03-10T10:00:00Z" })).toContain(
      "generated 2026-03-10T10:00:00Z",
    );
  });
});

describe("renderAuditReport", () => {
  it("renders a batch run's report when the audit has its SIMULATION_START, and the served view otherwise", () => {
    expect(renderAuditReport(events)).toBe(renderReport(events));
    expect(renderAuditReport(served)).toBe(renderServedReport(served));
  });
});

describe("the pages' Content-Security-Policy", () => {
  const sha = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
  const inline = (html: string, tag: string) => {
    const all = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1]!);
    expect(all, tag).toHaveLength(1);
    return all[0]!;
  };

  it.each([
    ["the run report", () => renderReport(events), REPORT_CSP],
    ["the served view", () => page, REPORT_CSP],
    ["the review page", () => renderReviewPage(), REVIEW_PAGE_CSP],
  ])("allows exactly the inline script and stylesheet of %s, by hash", (_name, render, csp) => {
    const html = render();
    expect(csp).toContain(`script-src ${sha(inline(html, "script"))};`);
    expect(csp).toContain(`style-src ${sha(inline(html, "style"))};`);
    expect(csp).toMatch(/^default-src 'none'; /);
    expect(csp).not.toMatch(/unsafe|\*|https?:/);
    expect(html).not.toMatch(/ style="|<link\b|<img\b|src=/);
  });

  it("lets only the review page call the API, on its own origin", () => {
    expect(REVIEW_PAGE_CSP).toContain("connect-src 'self'");
    expect(REPORT_CSP).toContain("connect-src 'none'");
  });
});
