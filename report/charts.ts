// Inline SVG charts (no library, no CDN): the verdict mix, the money per outcome and the decision time per
// claim. Colours come from the stylesheet's classes (one per outcome), so the SVG carries no style attribute.
import type { SafeHtml } from "./html.ts";
import { html } from "./html.ts";
import type { ClaimTrace, MoneyByOutcome, Outcome, ReportModel } from "./model.ts";
import { OUTCOMES, OUTCOME_LABEL, duration, eur } from "./parts.ts";

const f1 = (v: number): string => String(Math.round(v * 10) / 10);

/** A donut of the outcomes with a legend of counts and shares. */
function verdictMixChart(claims: readonly ClaimTrace[], id: string): SafeHtml {
  const ran = claims.filter((t) => t.outcome !== "NOT_RUN");
  const total = ran.length;
  const parts = OUTCOMES.map((o) => ({ o, n: ran.filter((t) => t.outcome === o).length })).filter((p) => p.n > 0);
  const r = 62;
  const c = 2 * Math.PI * r;
  let at = 0;
  const segments = parts.map(({ o, n }) => {
    const len = (n / total) * c;
    const seg = html`<circle class="seg ${o}" cx="90" cy="90" r="${r}" stroke-dasharray="${f1(len)} ${f1(c - len)}" stroke-dashoffset="${f1(-at)}" transform="rotate(-90 90 90)"><title>${OUTCOME_LABEL[o]}: ${n}</title></circle>`;
    at += len;
    return seg;
  });
  const legend = parts.map(({ o, n }, i) => {
    const y = 28 + i * 24;
    return html`<g data-legend="${o}"><rect class="swatch ${o}" x="200" y="${y - 11}" width="14" height="14" rx="3"></rect><text x="222" y="${y}">${OUTCOME_LABEL[o]}</text><text class="value" x="370" y="${y}" text-anchor="end">${n} · ${Math.round((n / total) * 100)} %</text></g>`;
  });
  return html`<figure class="chart" data-chart="verdict-mix">
<figcaption>Verdict mix</figcaption>
<svg viewBox="0 0 380 180" role="img" aria-labelledby="${id}-t"><title id="${id}-t">Verdict mix of ${total} claims</title>
<circle class="track" cx="90" cy="90" r="${r}"></circle>
${segments}
<text class="big-num" x="90" y="92" text-anchor="middle">${total}</text><text x="90" y="112" text-anchor="middle">claims</text>
${total === 0 ? html`<text x="200" y="40">No claims yet.</text>` : legend}
</svg></figure>`;
}

type MoneyRow = { key: keyof MoneyByOutcome; label: string; cls: string };

const MONEY_ROWS: readonly MoneyRow[] = [
  { key: "refundedAuto", label: "Refunded (ACCEPT)", cls: "ACCEPT" },
  { key: "refundedApproved", label: "Refunded after review", cls: "APPROVED" },
  { key: "escalatedPending", label: "Escalated, awaiting review", cls: "ESCALATE" },
  { key: "escalatedDenied", label: "Escalated, not granted", cls: "DENIED" },
  { key: "rejected", label: "Rejected", cls: "REJECT" },
  { key: "needsReview", label: "Needs review", cls: "NEEDS_REVIEW" },
];

/** Horizontal bars: the EUR at stake per outcome — refunded (automatically or after review), escalated, rejected, in review. */
function moneyChart(money: MoneyByOutcome, id: string): SafeHtml {
  const max = Math.max(...MONEY_ROWS.map((r) => money[r.key]), 0);
  const x0 = 160;
  const width = 120;
  const rows = MONEY_ROWS.map((r, i) => {
    const v = money[r.key];
    const y = 14 + i * 27;
    const w = max > 0 ? Math.max(v > 0 ? 2 : 0, (v / max) * width) : 0;
    return html`<g data-money="${r.key}" data-value="${v.toFixed(2)}"><text x="0" y="${y + 12}">${r.label}</text><rect class="bar-bg" x="${x0}" y="${y}" width="${width}" height="16" rx="3"></rect><rect class="bar ${r.cls}" x="${x0}" y="${y}" width="${f1(w)}" height="16" rx="3"><title>${r.label}: ${eur(v)}</title></rect><text class="value" x="380" y="${y + 12}" text-anchor="end">${v.toFixed(2)}</text></g>`;
  });
  return html`<figure class="chart" data-chart="money">
<figcaption>Money per outcome (EUR)</figcaption>
<svg viewBox="0 0 380 180" role="img" aria-labelledby="${id}-t"><title id="${id}-t">EUR refunded, escalated, rejected and in review</title>
${rows}
</svg></figure>`;
}

/** A readable upper bound for an axis: 1, 2 or 5 times a power of ten, at least `v`. */
function niceCeil(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((n) => n >= v) ?? 10 * p;
}

/** The median of the values (undefined for none). */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1]! + s[mid]!) / 2;
}

/** Vertical bars: each claim's time from receipt to its outcome, in the order received, coloured by outcome, with the median. */
function decisionTimeChart(claims: readonly ClaimTrace[], id: string): SafeHtml {
  const ran = claims.filter((t) => t.outcome !== "NOT_RUN");
  // A batch decides as of one fixed instant: every audit decision time is 0. Its wall time per claim is what shows.
  const decided = ran.map((t) => t.decisionMs).filter((v): v is number => v !== undefined);
  const wall = decided.length > 0 && decided.every((v) => v === 0) && ran.some((t) => (t.batchMs ?? 0) > 0);
  const msOf = (t: ClaimTrace) => (wall ? t.batchMs : t.decisionMs);
  const times = ran.map(msOf).filter((v): v is number => v !== undefined);
  const top = niceCeil(Math.max(...times, 0));
  const plot = { x: 46, y: 12, w: 326, h: 136 };
  const step = ran.length > 0 ? plot.w / ran.length : plot.w;
  const barW = Math.max(1, step * 0.75);
  const yOf = (ms: number) => plot.y + plot.h - (ms / top) * plot.h;
  const bars = ran.map((t, i) => {
    const x = plot.x + i * step + (step - barW) / 2;
    const ms = msOf(t);
    if (ms === undefined) {
      // With wall times, a claim a review step started (a resubmission) was not timed on its own.
      const why =
        wall && t.decisionMs !== undefined ? "not timed by the batch (a review step started it)" : "no outcome yet";
      return html`<rect class="bar PENDING" x="${f1(x)}" y="${plot.y + plot.h - 2}" width="${f1(barW)}" height="2"><title>${t.claimId}: ${why}</title></rect>`;
    }
    const y = yOf(ms);
    return html`<rect class="bar ${t.outcome}" data-claim-id="${t.claimId}" data-ms="${ms}" x="${f1(x)}" y="${f1(Math.min(y, plot.y + plot.h - 1))}" width="${f1(barW)}" height="${f1(Math.max(1, plot.y + plot.h - y))}"><title>${t.claimId}: ${duration(ms)} (${OUTCOME_LABEL[t.outcome as Outcome]})</title></rect>`;
  });
  const med = median(times);
  const medLine =
    med === undefined
      ? html``
      : html`<line class="median" x1="${plot.x}" x2="${plot.x + plot.w}" y1="${f1(yOf(med))}" y2="${f1(yOf(med))}"></line><text class="value" x="${plot.x + plot.w}" y="${f1(Math.max(plot.y + 10, yOf(med) - 4))}" text-anchor="end">median ${duration(med)}</text>`;
  const note =
    ran.length === 0
      ? html`<text x="${plot.x + 10}" y="${plot.y + 60}">No claims yet.</text>`
      : times.length > 0 && times.every((v) => v === 0)
        ? html`<text x="${plot.x + 10}" y="${plot.y + 60}">All decided at the instant they arrived (a fixed clock).</text>`
        : html``;
  return html`<figure class="chart" data-chart="decision-time" data-basis="${wall ? "wall" : "audit"}" data-median-ms="${med ?? ""}">
<figcaption>${wall ? "Time per claim (the batch's wall time: its decisions are as of one fixed instant)" : "Decision time per claim"}</figcaption>
<svg viewBox="0 0 380 180" role="img" aria-labelledby="${id}-t"><title id="${id}-t">Time from receipt to outcome for ${ran.length} claims, in the order received</title>
<line class="axis" x1="${plot.x}" x2="${plot.x}" y1="${plot.y}" y2="${plot.y + plot.h}"></line><line class="axis" x1="${plot.x}" x2="${plot.x + plot.w}" y1="${plot.y + plot.h}" y2="${plot.y + plot.h}"></line>
<text x="${plot.x - 4}" y="${plot.y + 8}" text-anchor="end">${duration(top)}</text><text x="${plot.x - 4}" y="${plot.y + plot.h}" text-anchor="end">0</text>
<text x="${plot.x}" y="${plot.y + plot.h + 16}">first received</text><text x="${plot.x + plot.w}" y="${plot.y + plot.h + 16}" text-anchor="end">last received</text>
${bars}
${medLine}
${note}
</svg></figure>`;
}

/** The three charts of a report, side by side. */
export function renderCharts(m: Pick<ReportModel, "claims" | "money">, id: string): SafeHtml {
  return html`<div class="charts">${verdictMixChart(m.claims, `${id}-mix`)}${moneyChart(m.money, `${id}-money`)}${decisionTimeChart(m.claims, `${id}-time`)}</div>`;
}
