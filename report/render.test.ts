import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { ReportInputError } from "./errors.ts";
import { FIXTURE_SIMULATION_ID, buildFixtureEvents } from "./fixture.test-kit.ts";
import { renderReport } from "./render.ts";
import { writeReport } from "../cli/report-file.ts";
import { parseScenarios } from "../core/history/scenarios.ts";
import { EVALUATION_ORDER } from "../core/kernel/kernel.ts";

/** The bundled scenarios the fixture runs: the counts below follow the file. */
const SCENARIOS = parseScenarios(
  readFileSync(new URL("../scenarios/scenarios.yaml", import.meta.url), "utf8"),
  "scenarios.yaml",
);
const TOTAL = SCENARIOS.length;
const ACCEPTED = SCENARIOS.filter((s) => s.expected.verdict === "ACCEPT").length;

type Row = { claimId: string; verdict: string; expected: string; scenario: string; match: string };

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** The trace rows, read from their data-* hooks. */
function traceRows(page: string): Row[] {
  const re =
    /<tr data-claim-id="([^"]*)" data-verdict="([^"]*)" data-expected="([^"]*)" data-scenario="([^"]*)" data-match="([^"]*)">/g;
  return [...page.matchAll(re)].map((m) => ({
    claimId: unescape(m[1]!),
    verdict: m[2]!,
    expected: m[3]!,
    scenario: unescape(m[4]!),
    match: m[5]!,
  }));
}

const summaryValue = (page: string, key: string) => new RegExp(`data-summary="${key}"[^>]*>([^<]*)<`).exec(page)?.[1];
const countValue = (page: string, outcome: string) =>
  new RegExp(`data-count="${outcome}" data-value="(\\d+)"`).exec(page)?.[1];

/** Each claim's outcome as the raw events tell it: the kernel verdict, else NEEDS_REVIEW. */
function outcomesFromEvents(events: AuditEvent[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of events) {
    const id = e.details.claim_id;
    if (typeof id !== "string") continue;
    if (e.event_type === "KERNEL_VERDICT") out.set(id, String(e.details.verdict));
    else if (e.event_type === "CLAIM_NEEDS_REVIEW" && [undefined, "PENDING"].includes(out.get(id)))
      out.set(id, "NEEDS_REVIEW");
    else if (!out.has(id)) out.set(id, "PENDING");
  }
  return out;
}

const clone = (events: AuditEvent[]): AuditEvent[] => structuredClone(events);
const claimIdOf = (events: AuditEvent[], scenario: string): string => {
  const end = events.find((e) => e.event_type === "SIMULATION_END")!;
  const results = end.details.results as { id: string; claim_id: string }[];
  return results.find((r) => r.id === scenario)!.claim_id;
};

let events: AuditEvent[];
let page: string;

beforeAll(async () => {
  events = await buildFixtureEvents();
  page = renderReport(events);
});

describe("renderReport on a full run", () => {
  it("gives every claim of the run one trace row carrying the verdict its events record", () => {
    const outcomes = outcomesFromEvents(events);
    const rows = traceRows(page);
    expect(outcomes.size).toBe(TOTAL);
    expect(rows.map((r) => r.claimId).sort()).toEqual([...outcomes.keys()].sort());
    for (const row of rows) expect(row.verdict, row.claimId).toBe(outcomes.get(row.claimId));
  });

  it.each([
    ["A", "ACCEPT"],
    ["B", "ESCALATE"],
    ["C", "REJECT"],
    ["D", "REJECT"],
    ["E", "ACCEPT"],
    ["F", "ESCALATE"],
    ["G", "REJECT"],
    ["I", "ESCALATE"],
    ["R", "NEEDS_REVIEW"],
  ])("shows scenario %s as %s, as expected, with a ✓", (scenario, verdict) => {
    const row = traceRows(page).find((r) => r.scenario === scenario);
    expect(row).toMatchObject({ verdict, expected: verdict, match: "true", claimId: claimIdOf(events, scenario) });
  });

  it("badges each verdict with its own colour class", () => {
    for (const [verdict, label] of [
      ["ACCEPT", "ACCEPT"],
      ["ESCALATE", "ESCALATE"],
      ["REJECT", "REJECT"],
      ["NEEDS_REVIEW", "NEEDS REVIEW"],
    ] as const) {
      expect(page).toContain(`<span class="badge ${verdict}">${label}</span>`);
    }
  });

  it("summarises matched/total from SIMULATION_END and counts verdicts over the rows", () => {
    const end = events.find((e) => e.event_type === "SIMULATION_END")!;
    expect(summaryValue(page, "matched")).toBe(String(end.details.matched));
    expect(summaryValue(page, "total")).toBe(String(end.details.total));
    expect(summaryValue(page, "simulation-id")).toBe(FIXTURE_SIMULATION_ID);
    const rows = traceRows(page);
    for (const outcome of ["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW"]) {
      expect(countValue(page, outcome), outcome).toBe(String(rows.filter((r) => r.verdict === outcome).length));
    }
    expect(summaryValue(page, "agent")).toBe("claims_agent_v1 v1.2.0");
    expect(summaryValue(page, "llm")).toMatch(/^rules · rules/);
  });

  it("totals the tokens of every LLM call, extraction included, and marks them estimated", () => {
    const total = events
      .filter((e) => ["LLM_CALL", "CLAIM_EXTRACTED", "CLAIM_EXTRACTION_FAILED"].includes(e.event_type))
      .reduce((sum, e) => sum + ((e.details.usage as { total_tokens?: number } | undefined)?.total_tokens ?? 0), 0);
    expect(total).toBeGreaterThan(0);
    const shown = (s: string | undefined) => Number((s ?? "").replace(/\s/g, ""));
    expect(shown(summaryValue(page, "tokens"))).toBe(total);
    expect(shown(summaryValue(page, "tokens-total"))).toBe(total);
    expect(page).toMatch(/data-summary="tokens">[^<]*<span class="est"/);
  });

  it("leaves the estimate marks out when the usage is measured", () => {
    const measured = clone(events).map((e) => {
      const usage = e.details.usage as Record<string, unknown> | undefined;
      if (usage) usage.estimated = false;
      return e;
    });
    expect(renderReport(measured)).not.toContain('class="est"');
  });

  it("puts the sections in the order summary, trace, decision cycles, orders, token usage", () => {
    const at = ["summary", "trace", "cycles", "orders", "tokens"].map((id) => page.indexOf(`<section id="${id}"`));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it("opens no decision cycle by default and gives one per claim", () => {
    const cycles = [...page.matchAll(/<details class="cycle"( open)? id="[^"]+" data-claim-id="([^"]+)"/g)];
    expect(cycles).toHaveLength(TOTAL);
    expect(cycles.some((m) => m[1])).toBe(false);
  });

  it("highlights the deciding kernel layer and marks later layers not reached", () => {
    const cycleOf = (scenario: string) => {
      const block = page.slice(
        page.indexOf(`data-claim-id="${claimIdOf(events, scenario)}"`, page.indexOf('<section id="cycles"')),
      );
      return block.slice(0, block.indexOf("</details>"));
    };
    // H: the crew's proposal (120 EUR on an 80 EUR order) is rejected at the balance (7).
    const cycle = cycleOf("H");
    expect(cycle).toMatch(/<li class="deciding" data-layer="7" data-state="fail" data-deciding="true">/);
    // Alignment (8) runs right after the schema (1), so it passed before the balance failed; every later layer was not reached.
    expect(cycle).toContain('data-layer="8" data-state="pass"');
    for (const layer of [8.5, 9, 9.5, 10, 10.5, 11]) expect(cycle).toContain(`data-layer="${layer}" data-state="skip"`);
    // The layers are listed in the order they run.
    const order = [...cycle.matchAll(/data-layer="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(order).toEqual([...EVALUATION_ORDER]);
    expect(cycle).toContain("refundable_balance → EXCEEDS_REFUNDABLE_BALANCE");
    // C was triaged: the window (5) decided on the claim itself, with no proposal (no schema or alignment layer ran).
    const triaged = cycleOf("C");
    expect(triaged).toMatch(/<li class="deciding" data-layer="5" data-state="fail" data-deciding="true">/);
    expect(triaged).not.toContain('data-layer="8" data-state="pass"');
    expect(triaged).toContain("return_window → OUTSIDE_RETURN_WINDOW");
  });

  it("shows who wrote the analysis: the compact crew's Claims Officer, or the two agents' Claims Analyst", () => {
    const cycleOf = (scenario: string) => {
      const block = page.slice(
        page.indexOf(`data-claim-id="${claimIdOf(events, scenario)}"`, page.indexOf('<section id="cycles"')),
      );
      return block.slice(0, block.indexOf("</details>"));
    };
    // A's facts are plain: one Claims Officer step (docs/llm.md, "Crew shape").
    expect(cycleOf("A")).toContain("<h3>Claims Officer</h3><pre>the claim states no purchase date, so the 14-day");
    expect(cycleOf("A")).toContain("<h3>Claims Officer proposal</h3>");
    // I's text holds instructions: the two agents decide, the analyst flagging them.
    expect(cycleOf("I")).toMatch(/<h3>Claims Analyst<\/h3><pre>Assessment of the claim for order ord_008/);
    expect(cycleOf("I")).toContain("<h3>Decision Maker proposal</h3>");
  });

  it("shows the executed refund and the ledger after it for an accepted claim", () => {
    const row = page.slice(page.indexOf(`<tr data-claim-id="${claimIdOf(events, "A")}"`));
    expect(row.slice(0, row.indexOf("</tr>"))).toContain('data-refund="299.99"><span class="pass">299.99</span>');
    expect(page).toContain('<th class="num">Refund (EUR)</th>');
    expect(page).toContain("Refunded on the order after");
    expect(summaryValue(page, "refunds")).toBe(`${ACCEPTED} `);
  });

  it("lists every authoritative order of SIMULATION_START", () => {
    const start = events.find((e) => e.event_type === "SIMULATION_START")!;
    const orders = (start.details.orders as { order_id: string }[]).map((o) => o.order_id);
    const shown = [...page.matchAll(/<tr data-order-id="([^"]+)">/g)].map((m) => m[1]);
    expect(shown).toEqual(orders);
  });

  it("is deterministic: the same events give the same bytes, and a second fixture run gives the same report", async () => {
    expect(renderReport(events)).toBe(page);
    expect(renderReport(await buildFixtureEvents())).toBe(page);
    expect(page).not.toContain("generated");
    expect(renderReport(events, { generatedAt: "2026-03-10T10:00:00Z" })).toContain("generated 2026-03-10T10:00:00Z");
  });

  it("is self-contained: no external stylesheet, script, image or font", () => {
    expect(page).not.toMatch(/<link\b|<img\b|src=|@import|url\(/i);
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).toMatch(/^<!doctype html>/);
  });
});

describe("renderReport of a batch decided as of one instant", () => {
  it("charts the wall time the batch waited for each claim, since every audit decision time is 0", async () => {
    const timed = renderReport(await buildFixtureEvents({ only: ["A", "B", "C"], wallMs: (i) => 1_000 * (i + 1) }));
    expect(timed).toMatch(/data-chart="decision-time" data-basis="wall" data-median-ms="2000"/);
    const bars = [...timed.matchAll(/<rect class="bar [A-Z_]+" data-claim-id="[^"]+" data-ms="(\d+)"/g)].map(
      (m) => m[1],
    );
    expect(bars).toEqual(["1000", "2000", "3000"]);
    expect(timed).toContain("Time per claim (the batch&#39;s wall time");
  });

  it("keeps the audit's decision times when the batch recorded no wall time, and says the clock was fixed", () => {
    expect(page).toMatch(/data-chart="decision-time" data-basis="audit"/);
    expect(page).toContain("All decided at the instant they arrived (a fixed clock).");
  });
});

describe("renderReport escaping", () => {
  const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>"'&`;
  const escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;";

  it("escapes customer text, labels, reasons, analysis, ids and order data", () => {
    const tampered = clone(events);
    const target = claimIdOf(events, "E");
    for (const e of tampered) {
      const d = e.details as Record<string, unknown>;
      if (e.event_type === "SIMULATION_START") {
        (d.orders as Record<string, unknown>[])[0]!.category = evil;
        (d.scenarios as Record<string, unknown>[])[0]!.label = evil;
        d.stack = evil;
      }
      if (d.claim_id !== target) continue;
      if (e.event_type === "CLAIM_RECEIVED") {
        d.input = { claim_text: evil };
        d.label = evil;
      }
      if (e.event_type === "KERNEL_VERDICT") d.reason = evil;
      if (e.event_type === "AGENT_STEP") {
        const out = (d.inbound as { output: Record<string, unknown> }).output;
        if ("analysis" in out) out.analysis = evil;
        else out.reason = evil;
      }
      d.claim_id = `${target}${evil}`;
    }
    const end = tampered.find((e) => e.event_type === "SIMULATION_END")!;
    for (const r of end.details.results as Record<string, unknown>[])
      if (r.claim_id === target) r.claim_id = `${target}${evil}`;
    const out = renderReport(tampered);
    expect(out).not.toContain("<script>alert");
    expect(out).not.toContain("<img");
    expect(out.match(/<script/g)).toHaveLength(1);
    expect(out.split(escaped).length - 1).toBeGreaterThanOrEqual(8);
    expect(traceRows(out).map((r) => r.claimId)).toContain(`${target}${evil}`);
  });

  it("never lets any text from an event open a tag or break an attribute (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), (text, reason) => {
        const tampered = clone(
          events.filter((e) => e.details.claim_id === claimIdOf(events, "E") || e.event_type.startsWith("SIMULATION")),
        );
        for (const e of tampered) {
          const d = e.details as Record<string, unknown>;
          if (e.event_type === "CLAIM_RECEIVED") d.input = { claim_text: `<b>${text}` };
          if (e.event_type === "KERNEL_VERDICT") d.reason = `"${reason}<i>`;
          if (e.event_type === "CLAIM_RECEIVED") d.label = `${reason}'"><u>`;
        }
        const out = renderReport(tampered);
        return !/<b>|<i>|<u>/.test(out) && out.match(/<script/g)?.length === 1;
      }),
      { numRuns: 60 },
    );
  });
});

describe("renderReport with missing pieces", () => {
  it("says the run is incomplete when SIMULATION_END is missing and computes the totals from the claims", async () => {
    const partial = await buildFixtureEvents({ withoutEnd: true });
    const out = renderReport(partial);
    expect(out).toContain('data-banner="incomplete"');
    expect(out).toContain("Run incomplete");
    expect(summaryValue(out, "matched")).toBe(String(TOTAL));
    expect(summaryValue(out, "total")).toBe(String(TOTAL));
    expect(traceRows(out).filter((r) => r.match === "true")).toHaveLength(TOTAL);
    expect(page).not.toContain('data-banner="incomplete"');
  });

  it("shows a claim without a verdict as NO VERDICT that does not match", () => {
    const id = claimIdOf(events, "A");
    const cut = events.filter(
      (e) => !(e.details.claim_id === id && ["KERNEL_VERDICT", "CLAIM_REFUND_EXECUTED"].includes(e.event_type)),
    );
    const out = renderReport(cut);
    expect(traceRows(out).find((r) => r.claimId === id)).toMatchObject({
      verdict: "PENDING",
      expected: "ACCEPT",
      match: "false",
    });
    expect(out).toContain('<span class="badge PENDING">NO VERDICT</span>');
    expect(out).toContain('data-banner="mismatch"');
  });

  it("shows the review reason of a NEEDS_REVIEW claim and no kernel verdict for it", () => {
    const id = claimIdOf(events, "R");
    const row = page.slice(page.indexOf(`<tr data-claim-id="${id}"`));
    expect(row.slice(0, row.indexOf("</tr>"))).toContain("NO_ORDER_ID");
    const cycle = page.slice(page.indexOf(`<details class="cycle" id="cycle-19-${id}"`));
    expect(cycle.slice(0, cycle.indexOf("</details>"))).toContain(
      "No kernel verdict (the claim went to human review before the kernel)",
    );
  });

  it("lists a scenario that never ran as NOT RUN when the run stopped early", async () => {
    const partial = await buildFixtureEvents({ withoutEnd: true });
    const lastId = claimIdOf(events, "R");
    const out = renderReport(partial.filter((e) => e.details.claim_id !== lastId));
    expect(traceRows(out).find((r) => r.scenario === "R")).toEqual({
      claimId: "",
      verdict: "NOT_RUN",
      expected: "NEEDS_REVIEW",
      scenario: "R",
      match: "false",
    });
    expect(summaryValue(out, "matched")).toBe(String(TOTAL - 1));
    expect(summaryValue(out, "total")).toBe(String(TOTAL));
  });

  it("still shows every claim without SIMULATION_START, and says what is unknown", () => {
    const out = renderReport(events.filter((e) => e.event_type !== "SIMULATION_START"));
    expect(out).toContain('data-banner="no-start"');
    expect(traceRows(out)).toHaveLength(TOTAL);
    expect(out).toContain("Unknown: the audit has no readable SIMULATION_START.");
  });

  it("names the problem when SIMULATION_START details do not follow the schema", () => {
    const broken = clone(events);
    delete (broken[0]!.details as Record<string, unknown>).agent;
    const out = renderReport(broken);
    expect(out).toMatch(/SIMULATION_START details do not follow the schema \(agent: /);
  });

  it("names a claim's event whose details do not follow its schema, and does not read it", () => {
    const broken = clone(events);
    const verdict = broken.find((e) => e.event_type === "KERNEL_VERDICT")!;
    verdict.details.verdict = "MAYBE";
    const out = renderReport(broken);
    expect(out).toMatch(/Not read: KERNEL_VERDICT details do not follow the schema \(verdict: /);
    const row = traceRows(out).find((r) => r.claimId === verdict.details.claim_id);
    expect(row?.verdict).not.toBe("MAYBE");
  });

  it("flags a SIMULATION_END whose recorded totals disagree with the claim events", () => {
    const tampered = clone(events);
    tampered[tampered.length - 1]!.details.matched = 3;
    expect(renderReport(tampered)).toContain(
      `SIMULATION_END records 3 matched, but the claim events show ${TOTAL} of ${TOTAL}.`,
    );
  });

  it("renders an empty audit as an incomplete run with no rows", () => {
    const out = renderReport([]);
    expect(out).toContain("Run incomplete");
    expect(traceRows(out)).toHaveLength(0);
    expect(out).toContain("No LLM calls were recorded.");
  });

  it("refuses events of two simulations with an error naming both", () => {
    const other = clone(events.slice(0, 1));
    other[0]!.details.simulation_id = "sim_other";
    expect(() => renderReport([...events, ...other])).toThrow(ReportInputError);
    expect(() => renderReport([...events, ...other])).toThrow(/sim_report_fixture, sim_other/);
  });
});

describe("writeReport", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "claims-report-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("creates missing folders, writes the rendered page and returns the absolute path", () => {
    const path = writeReport(events, join(dir, "nested", "deeper", "report.html"));
    expect(path).toBe(join(dir, "nested", "deeper", "report.html"));
    expect(readFileSync(path, "utf8")).toBe(page);
  });

  it("throws a ReportWriteError naming the path when it cannot write", () => {
    const path = writeReport(events, join(dir, "file.html"));
    expect(() => writeReport(events, join(path, "inside.html"))).toThrow(
      /could not write the report to .*file\.html\/inside\.html/,
    );
  });
});

describe("renderReport with human reviews", () => {
  const CORRECTED = { order_id: "ord_010", amount_eur: 30, category: "home", reason: "The lid is cracked" };
  let reviewed: AuditEvent[];
  let out: string;
  const cycleOf = (claimId: string) => {
    const block = out.slice(out.indexOf(`data-claim-id="${claimId}"`, out.indexOf('<section id="cycles"')));
    return block.slice(0, block.indexOf("</details>"));
  };
  const rowOf = (claimId: string) => {
    const row = out.slice(out.indexOf(`<tr data-claim-id="${claimId}"`));
    return row.slice(0, row.indexOf("</tr>"));
  };
  const moneyValue = (key: string) => Number(new RegExp(`data-money="${key}" data-value="([\\d.]+)"`).exec(out)?.[1]);

  beforeAll(async () => {
    reviewed = await buildFixtureEvents({
      reviews: [
        {
          scenario: "B",
          decision: { decision: "APPROVE", amount_eur: 800, reviewer: "alice", note: "Partial refund agreed" },
        },
        { scenario: "F", decision: { decision: "DENY", reviewer: "bob", note: "Delivery confirmed" } },
        { scenario: "R", decision: { decision: "RESUBMIT", reviewer: "alice", claim: CORRECTED } },
      ],
    });
    out = renderReport(reviewed);
  });

  it("counts the review steps with the claims, as the batch's console does, and says how many of each", () => {
    expect(summaryValue(out, "matched")).toBe(String(TOTAL + 3));
    expect(summaryValue(out, "total")).toBe(String(TOTAL + 3));
    expect(summaryValue(out, "rows")).toBe(`${TOTAL} scenario claims · 3 review steps`);
  });

  it("shows the outcome a person gave each reviewed claim in its row, after the verdict", () => {
    expect(rowOf(claimIdOf(reviewed, "B"))).toMatch(
      /data-final="APPROVE">.*then <span class="review-status APPROVE">APPROVED by alice · 800\.00 EUR<\/span>/s,
    );
    expect(rowOf(claimIdOf(reviewed, "F"))).toMatch(
      /data-final="DENY">.*then <span class="review-status DENY">DENIED by bob</s,
    );
    expect(rowOf(claimIdOf(reviewed, "R"))).toMatch(
      /then <span class="review-status RESUBMIT">RESUBMITTED by alice → clm_/,
    );
    // A claim nobody reviewed keeps its verdict alone.
    expect(rowOf(claimIdOf(reviewed, "A"))).not.toContain("data-final");
  });

  it("shows an approval in the claim's row: the refund, who approved it, and the review's status in its cycle", () => {
    const b = claimIdOf(reviewed, "B");
    expect(rowOf(b)).toContain('data-verdict="ESCALATE"');
    expect(rowOf(b)).toMatch(
      /data-refund="800"><span class="pass">800\.00<\/span><span class="sub-line">approved by alice<\/span>/,
    );
    const cycle = cycleOf(b);
    expect(cycle).toMatch(
      /<p data-review="requested">Review <span class="mono">rev_[0-9a-f]{24}<\/span> requested \(ESCALATE\): <span class="mono">AMOUNT_ABOVE_LIMIT<\/span>/,
    );
    expect(cycle).toMatch(/<p data-review="decided" data-decision="APPROVE">.*<strong>APPROVE<\/strong> by alice/);
    expect(cycle).toContain("<dt>Approved amount</dt><dd>800.00 EUR</dd><dt>Note</dt><dd>Partial refund agreed</dd>");
    expect(cycle).toMatch(
      /✓ refund executed: 800\.00 EUR on <span class="mono">ord_002<\/span> <span class="tag">approved by alice<\/span>/,
    );
  });

  it("shows a denial with its note and no refund, and a pending review as waiting", () => {
    const f = cycleOf(claimIdOf(reviewed, "F"));
    expect(f).toMatch(/data-decision="DENY">.*<strong>DENY<\/strong> by bob/);
    expect(f).toContain("<dt>Note</dt><dd>Delivery confirmed</dd>");
    expect(f).not.toContain("refund executed");
    expect(cycleOf(claimIdOf(reviewed, "K"))).toContain(
      '<p class="muted" data-review="pending">Waiting for a reviewer.</p>',
    );
    expect(cycleOf(claimIdOf(reviewed, "A"))).toContain("Not needed: the kernel decided.");
  });

  it("links a resubmitted claim to the corrected one, which runs as a claim of its own", () => {
    const r = claimIdOf(reviewed, "R");
    const child = reviewed.find((e) => e.event_type === "REVIEW_DECIDED" && e.details.claim_id === r)!.details
      .resubmitted_claim_id as string;
    expect(cycleOf(r)).toContain(`<dt>Corrected claim</dt><dd>${child}</dd>`);
    // A resubmitted claim is never refunded automatically: the corrected claim waits for a person.
    expect(rowOf(child)).toContain('data-verdict="ESCALATE"');
    expect(rowOf(child)).toContain("structured · resubmitted");
    expect(cycleOf(child)).toContain(`corrects <span class="mono">${r}</span>`);
  });

  it("counts the reviews and splits the money by what reviewers granted", () => {
    const requested = reviewed.filter((e) => e.event_type === "REVIEW_REQUESTED").length;
    expect(summaryValue(out, "reviews")).toBe(`${requested} opened · 3 decided`);
    expect(moneyValue("refundedApproved")).toBe(800);
    // F's 1200 denied, and the 400 of B's 1200 that alice did not grant.
    expect(moneyValue("escalatedDenied")).toBe(1600);
    // The money at stake counts EUR only: the USD and JPY rows' refunds (US, JP1, LT1) are never added to it.
    const otherCurrencies = new Set(["US", "JP1", "LT1"].map((row) => claimIdOf(reviewed, row)));
    const accepted = reviewed.filter(
      (e) =>
        e.event_type === "CLAIM_REFUND_EXECUTED" &&
        e.details.approved_by === undefined &&
        !otherCurrencies.has(String(e.details.claim_id)),
    );
    expect(accepted.length).toBeGreaterThan(0);
    expect(moneyValue("refundedAuto")).toBeCloseTo(
      accepted.reduce((s, e) => s + Number(e.details.amount_eur), 0),
      2,
    );
  });

  it("names the kernel's later layers as docs/kernel.md does (8b, 9b, 10b)", () => {
    const cycle = cycleOf(claimIdOf(reviewed, "T3"));
    for (const name of ["8b customer", "9b customer_unverified", "10b open_review"])
      expect(cycle).toContain(`<strong>${name}</strong>`);
    expect(cycle).toMatch(/data-layer="9\.5" data-state="fail" data-deciding="true">/);
  });
});
