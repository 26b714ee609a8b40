// The HTML backtest report, rendered from a real backtest of the bundled run under a 100 EUR limit: one row
// and one drill-down per flip (the deciding layer on each side), the before/after charts carrying the
// totals, the people's decisions and the claims that could not be re-decided; escaped, deterministic.
import { beforeAll, describe, expect, it } from "vitest";
import { backtest } from "../core/history/backtest/index.ts";
import type { BacktestReport } from "../core/history/backtest/index.ts";
import { configWithLimit, policyOf, recordBundledRun } from "../core/history/backtest/backtest.test-kit.ts";
import type { BundledRun } from "../core/history/backtest/backtest.test-kit.ts";
import { renderBacktestReport } from "./backtest.ts";
import { REPORT_SCRIPT } from "./render.ts";

let run: BundledRun;
let report: BacktestReport;
let page: string;
beforeAll(async () => {
  run = await recordBundledRun();
  report = backtest({
    histories: [{ id: run.simulationId, events: run.events }],
    policy: policyOf(configWithLimit(100)),
  });
  page = renderBacktestReport(report);
}, 60_000);

/** The drill-down of one claim: its `<details>` element. */
const drillDown = (claimId: string) =>
  new RegExp(`<details class="cycle" id="flip-${claimId}"[\\s\\S]*?</details>`).exec(page)?.[0] ?? "";

/** The layer a side of a drill-down marks as deciding, and that layer's state. */
function deciding(details: string, side: "before" | "after") {
  const part = details.split(`data-side="${side}"`)[1]?.split("data-side=")[0] ?? "";
  const m = /data-layer="([\d.]+)" data-state="(\w+)" data-deciding="true"/.exec(part);
  return m ? { layer: Number(m[1]), state: m[2] } : undefined;
}

describe("the HTML backtest report", () => {
  it("lists every flip with a link to its drill-down, which shows the layer that decided each way", () => {
    const rows = [...page.matchAll(/<tr data-flip="([^"]+)">/g)].map((m) => m[1]);
    expect(rows).toEqual(report.flips.map((f) => f.claim_id));
    for (const f of report.flips) expect(page).toContain(`href="#flip-${f.claim_id}"`);
    const a = drillDown(run.claimOf("A"));
    expect(deciding(a, "before")).toEqual({ layer: 12, state: "pass" });
    expect(deciding(a, "after")).toEqual({ layer: 11, state: "fail" });
    expect(a).toContain("Amount 299.99 EUR exceeds max_refund_without_escalation (100.0 EUR)");
    // G was triaged (nothing left on ord_001); the candidate's triage lets it through: listed, never a flip.
    const g = run.claimOf("G");
    expect(drillDown(g)).toBe("");
    expect(report.not_evaluable.map((n) => n.claim_id)).toEqual([g]);
    expect(page).toContain(g);
  });

  it("charts and summarises the totals before and after", () => {
    // Under 100 EUR, A, E, J, S1, PB and the returns RT1 and RT3 go to a person (S2 then waits for S1's review, PB2
    // for PB's), and so would RT4, which a person denied: O 60 + P1 60 + T2 89 + CL1, CL2 60 each + ML1 40 + ML4 80 +
    // RT2 25 + SC1 80 (store credit) + EX1 45 (an exchange) stay automatic (EUR only: US's USD and JP1's JPY are never added in; RT3's and RT4's refunds were
    // released by their returns, never paid). G (triaged) is not evaluable, so 51 of the 52 decided claims count.
    expect(page).toMatch(/data-refunded="automatic" data-before="2778.98" data-after="599"/);
    expect(page).toMatch(/data-verdicts="ESCALATE" data-before="18" data-after="26"/);
    expect(page).toMatch(/data-verdicts="ACCEPT" data-before="21" data-after="13"/);
    expect(page).toMatch(/data-reviews="AMOUNT_ABOVE_LIMIT" data-before="7" data-after="14"/);
    expect(/data-summary="reviews">([^<]*)</.exec(page)?.[1]).toBe("18 → 26");
    expect(/data-summary="evaluated">([^<]*)</.exec(page)?.[1]).toBe("51");
    expect(/data-summary="flips">([^<]*)</.exec(page)?.[1]).toBe("8");
    expect([...page.matchAll(/<tr data-person="([^"]+)" data-sends="(\w+)">/g)].map((m) => [m[1], m[2]])).toEqual(
      report.human_decisions.map((p) => [p.claim_id, String(p.candidate_sends_to_person)]),
    );
  });

  it("shows what each side paid before the item was back, each currency apart, and the candidate's outcomes", () => {
    // RT1's 280 EUR waited for its delivery on the recorded side (18 claims paid at once); under 100 EUR every EUR
    // refund still automatic is paid at once (599.00 EUR, 13 claims with US's and LT1's USD and JP1's JPY); never added.
    expect(/data-summary="paid-before-return">([^<]*)</.exec(page)?.[1]).toBe("18 → 13 claims");
    expect(page).toContain("2498.98 → 599.00 EUR; 12800 → 12800 JPY; 569.00 → 569.00 USD");
    expect(/<ul data-summary="outcomes">([\s\S]*?)<\/ul>/.exec(page)?.[1]).toBe(
      "<li>Under the candidate, in EUR: 474.00 refunded as cash, 88.00 issued as store credit (its bonus 8.00), 1 exchange</li>",
    );
  });

  it("escapes recorded text, lists the claims it could not re-decide, and is the same bytes for the same result", () => {
    const hostile: BacktestReport = {
      ...report,
      not_evaluable: [
        { claim_id: "clm_x", reason: 'the kernel\'s recorded inputs do not parse (<script>alert("x")</script>)' },
      ],
      flip_details: report.flip_details.map((f, i) =>
        i === 0 ? { ...f, to: { ...f.to, reason: "<img src=x onerror=alert(1)>" } } : f,
      ),
    };
    const html = renderBacktestReport(hostile);
    expect(html).not.toContain("<img src=x");
    expect(html).not.toContain('<script>alert("x")');
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toMatch(/<tr data-not-evaluable="clm_x">/);
    expect([...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1])).toEqual([REPORT_SCRIPT]);
    expect(renderBacktestReport(report)).toBe(page);
  });

  it("says so when nothing flips", () => {
    const same = backtest({ histories: [{ id: "run", events: run.events }], policy: policyOf(configWithLimit(500)) });
    const html = renderBacktestReport(same);
    expect(html).toContain("No recorded decision changes under this policy.");
    expect(html).not.toContain("<tr data-flip=");
  });
});
