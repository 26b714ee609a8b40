// Small pieces both reports share: verdict badges, money and number formats, key-value lists, anchors.
import { SafeHtml, html } from "./html.ts";
import type { ClaimTrace, Outcome, Usage } from "./model.ts";

/** How each outcome reads on a badge. */
export const OUTCOME_LABEL: Record<Outcome, string> = {
  ACCEPT: "ACCEPT",
  ESCALATE: "ESCALATE",
  REJECT: "REJECT",
  NEEDS_REVIEW: "NEEDS REVIEW",
  PENDING: "NO VERDICT",
  NOT_RUN: "NOT RUN",
};

/** The outcomes in the order every list, chart and filter shows them. */
export const OUTCOMES: readonly Outcome[] = ["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW", "PENDING", "NOT_RUN"];

const ROLE_LABEL: Record<string, string> = {
  extractor: "Extractor",
  claims_analyst: "Claims Analyst",
  decision_maker: "Decision Maker",
};

/** An amount in EUR with two decimals, or a dash. */
export const eur = (v: number | undefined): string => (v === undefined ? "—" : `${v.toFixed(2)} EUR`);

/** An integer with thin thousands separators. */
export const int = (v: number): string => String(v).replace(/\B(?=(\d{3})+(?!\d))/g, " ");

/** A duration: milliseconds below a second, else seconds with one decimal (minutes past 100 s). */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 100_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** The display name of a crew role. */
export const roleLabel = (role: string): string => ROLE_LABEL[role] ?? role;

/** A kernel layer's number as docs/kernel.md writes it (8.5 is 8b, 10.6 is 10c, 10.7 is 10d). */
export const layerName = (n: number): string =>
  Number.isInteger(n) ? String(n) : `${Math.floor(n)}${SUB_LAYER[Math.round((n - Math.floor(n)) * 10)] ?? "b"}`;
const SUB_LAYER: Readonly<Record<number, string>> = { 5: "b", 6: "c", 7: "d" };

/** A code such as EXCEEDS_REFUNDABLE_BALANCE that may wrap after its underscores (never inside a word). */
export function breakable(code: string | undefined): SafeHtml {
  if (!code) return html``;
  return new SafeHtml(
    code
      .split("_")
      .map((part) => html`${part}`.value)
      .join("_<wbr>"),
  );
}

/** An amount as a plain number with two decimals (the column says EUR), or a dash. */
export const amount = (v: number | undefined): string => (v === undefined ? "—" : v.toFixed(2));

/** A verdict badge; unknown outcomes get the neutral colour. */
export function badge(outcome: string): SafeHtml {
  const known = outcome in OUTCOME_LABEL;
  return html`<span class="badge ${known ? outcome : "other"}">${known ? OUTCOME_LABEL[outcome as Outcome] : outcome}</span>`;
}

/** The anchor of a claim's decision cycle. */
export function anchorOf(t: ClaimTrace, index: number): string {
  const slug = (t.claimId || t.scenario?.id || "claim").replace(/[^A-Za-z0-9_-]/g, "_");
  return `cycle-${index + 1}-${slug}`;
}

/** The "est." mark of estimated token counts. */
export function est(u: Usage | undefined): SafeHtml {
  return u?.estimated
    ? html`<span class="est" title="estimated: the endpoint reported no token counts">est.</span>`
    : html``;
}

/** A definition list of the rows that have a value. */
export function kv(rows: [string, unknown][]): SafeHtml {
  const shown = rows.filter(([, v]) => v !== undefined && v !== null && v !== "");
  return html`<dl class="kv">${shown.map(([k, v]) => html`<dt>${k}</dt><dd>${v instanceof SafeHtml ? v : typeof v === "object" ? html`<code>${JSON.stringify(v)}</code>` : String(v)}</dd>`)}</dl>`;
}

/** A claim's review as one short line: its status, who decided and how much they granted. */
export function reviewText(t: ClaimTrace): string | undefined {
  const d = t.reviewDecision;
  if (d) {
    const by = d.reviewer ? ` by ${d.reviewer}` : "";
    if (d.decision === "APPROVE") return `APPROVED${by}${d.amountEur !== undefined ? ` · ${eur(d.amountEur)}` : ""}`;
    if (d.decision === "DENY") return `DENIED${by}`;
    if (d.decision === "RESUBMIT") return `RESUBMITTED${by}${d.resubmittedClaimId ? ` → ${d.resubmittedClaimId}` : ""}`;
    return `${d.decision}${by}`;
  }
  return t.reviewRequest ? "PENDING" : undefined;
}
