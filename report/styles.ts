// The report's inline stylesheet: a dark theme with WCAG-AA contrast for text and badges.

/** The report's CSS (a constant; no event data ever goes in here). */
export const REPORT_CSS = `
:root {
  color-scheme: dark;
  --bg: #0f1419; --panel: #171d25; --panel-2: #1e2631; --line: #2c3642;
  --text: #e6edf3; --muted: #9fb0c0; --link: #7cc4ff;
  --ok: #3fb950; --ok-bg: #12361d; --warn: #e3b341; --warn-bg: #3a2e0b;
  --bad: #ff7b72; --bad-bg: #3d1518; --review: #d2a8ff; --review-bg: #2e1f4a;
  --none: #a0aab4; --none-bg: #262c33;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
}
* { box-sizing: border-box; }
html { background: var(--bg); }
body { margin: 0; color: var(--text); background: var(--bg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1280px; margin: 0 auto; padding: 28px 24px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; letter-spacing: .2px; }
h2 { font-size: 19px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: .6px; }
p { margin: 6px 0; }
a { color: var(--link); }
code, pre, .mono { font-family: var(--mono); font-size: 13px; }
pre { background: var(--panel-2); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: 6px 0; }
.sub { color: var(--muted); margin: 0; }
.muted { color: var(--muted); }
.banner { border: 1px solid var(--warn); background: var(--warn-bg); color: #f5d77a; padding: 10px 14px; border-radius: 6px; margin: 14px 0; }
.banner.bad { border-color: var(--bad); background: var(--bad-bg); color: #ffb3ad; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: 14px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
.card dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 0; }
.card dt { color: var(--muted); }
.card dd { margin: 0; overflow-wrap: anywhere; }
.big { font-size: 34px; font-weight: 700; line-height: 1.1; }
.big.ok { color: var(--ok); } .big.bad { color: var(--bad); }
.chips { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 8px; }
table { width: 100%; border-collapse: collapse; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel-2); color: var(--muted); font-weight: 600; font-size: 13px; white-space: nowrap; }
tbody tr:nth-child(even) { background: #1a212a; }
tbody tr:hover { background: #222c38; }
tfoot td { font-weight: 700; background: var(--panel-2); }
td.nowrap { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td .reason { display: block; color: var(--muted); font-size: 13px; }
.table-wrap { overflow-x: auto; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px; font-weight: 700; letter-spacing: .4px; border: 1px solid; white-space: nowrap; }
.badge.ACCEPT { color: var(--ok); background: var(--ok-bg); border-color: #2ea043; }
.badge.ESCALATE { color: var(--warn); background: var(--warn-bg); border-color: #bb8009; }
.badge.REJECT { color: var(--bad); background: var(--bad-bg); border-color: #da3633; }
.badge.NEEDS_REVIEW { color: var(--review); background: var(--review-bg); border-color: #8957e5; }
.badge.PENDING, .badge.NOT_RUN, .badge.other { color: var(--none); background: var(--none-bg); border-color: #484f58; }
.match { font-weight: 700; }
.match.yes { color: var(--ok); } .match.no { color: var(--bad); }
.est { color: var(--warn); font-size: 11px; margin-left: 4px; }
details.cycle { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; margin: 8px 0; }
details.cycle > summary { cursor: pointer; padding: 10px 14px; display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
details.cycle > summary::marker { color: var(--muted); }
details.cycle[open] > summary { border-bottom: 1px solid var(--line); }
details.cycle:target { outline: 2px solid var(--link); }
.cycle-body { padding: 4px 18px 16px; }
ol.steps { list-style: none; margin: 0; padding: 0; counter-reset: step; }
ol.steps > li { position: relative; padding: 4px 0 10px 38px; border-left: 2px solid var(--line); margin-left: 12px; }
ol.steps > li::before { counter-increment: step; content: counter(step); position: absolute; left: -13px; top: 14px; width: 24px; height: 24px; border-radius: 50%; background: var(--panel-2); border: 1px solid var(--line); color: var(--muted); font-size: 12px; text-align: center; line-height: 22px; }
ol.steps > li:last-child { border-left-color: transparent; }
.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 4px 0; }
.kv dt { color: var(--muted); } .kv dd { margin: 0; overflow-wrap: anywhere; }
blockquote.customer { margin: 6px 0; padding: 8px 12px; border-left: 3px solid var(--link); background: var(--panel-2); border-radius: 0 6px 6px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
ul.layers { list-style: none; padding: 0; margin: 6px 0; }
ul.layers > li { padding: 5px 10px; border: 1px solid transparent; border-radius: 6px; }
ul.layers > li.deciding { border-color: var(--link); background: #13283d; }
ul.layers > li.skipped { color: #7d8b99; }
ul.layers .checks { margin: 2px 0 0 22px; padding: 0; list-style: none; font-family: var(--mono); font-size: 13px; }
.pass { color: var(--ok); } .fail { color: var(--bad); } .skip { color: #7d8b99; }
.tag { font-size: 12px; color: var(--link); border: 1px solid var(--link); border-radius: 4px; padding: 0 6px; margin-left: 6px; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; }
table.claims { table-layout: fixed; }
table.claims th { white-space: normal; vertical-align: bottom; }
table.claims td { overflow-wrap: anywhere; }
table.claims td.claim a { word-break: break-all; font-size: 12px; }
table.claims .code { font-size: 12px; }
.sub-line { display: block; color: var(--muted); font-size: 12px; }
.clamp { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }
td.center, th.center { text-align: center; }
table.claims td.expected, table.claims td.verdict .code { overflow-wrap: normal; }
table.claims td.expected .sub-line { font-family: var(--mono); }
table.run col.c-n { width: 4%; } table.run col.c-scenario { width: 17%; } table.run col.c-claim { width: 12%; }
table.run col.c-order { width: 8%; } table.run col.c-amount { width: 8%; } table.run col.c-verdict { width: 25%; }
table.run col.c-expected { width: 13%; } table.run col.c-match { width: 5%; } table.run col.c-refund { width: 8%; }
table.served col.c-n { width: 4%; } table.served col.c-received { width: 8%; } table.served col.c-claim { width: 19%; }
table.served col.c-order { width: 8%; } table.served col.c-amount { width: 8%; } table.served col.c-verdict { width: 24%; }
table.served col.c-review { width: 14%; } table.served col.c-refund { width: 8%; } table.served col.c-time { width: 7%; }
table.served.shadowed col.c-claim { width: 15%; } table.served.shadowed col.c-verdict { width: 20%; }
table.served.shadowed col.c-review { width: 12%; } table.served.shadowed col.c-shadow { width: 10%; }
.review-status { font-weight: 600; font-size: 13px; }
.review-status.APPROVE { color: var(--ok); } .review-status.DENY { color: var(--bad); }
.review-status.PENDING { color: var(--warn); } .review-status.RESUBMIT { color: var(--review); }
.filter { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 8px 0 10px; }
.filter input { position: absolute; opacity: 0; pointer-events: none; }
.filter label { cursor: pointer; border: 1px solid var(--line); background: var(--panel); border-radius: 999px; padding: 2px 12px; font-size: 13px; }
.filter input:checked + label { border-color: var(--link); background: #13283d; color: var(--text); }
.filter input:focus-visible + label { outline: 2px solid var(--link); }
.filter:has(input[value=ACCEPT]:checked) + .table-wrap tbody tr:not([data-verdict=ACCEPT]),
.filter:has(input[value=ESCALATE]:checked) + .table-wrap tbody tr:not([data-verdict=ESCALATE]),
.filter:has(input[value=REJECT]:checked) + .table-wrap tbody tr:not([data-verdict=REJECT]),
.filter:has(input[value=NEEDS_REVIEW]:checked) + .table-wrap tbody tr:not([data-verdict=NEEDS_REVIEW]),
.filter:has(input[value=PENDING]:checked) + .table-wrap tbody tr:not([data-verdict=PENDING]),
.filter:has(input[value=NOT_RUN]:checked) + .table-wrap tbody tr:not([data-verdict=NOT_RUN]) { display: none; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(330px, 1fr)); gap: 14px; margin-top: 14px; }
figure.chart { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px 8px; }
figure.chart figcaption { color: var(--muted); font-size: 13px; font-weight: 600; text-transform: uppercase; letter-spacing: .6px; margin-bottom: 4px; }
figure.chart svg { display: block; width: 100%; height: auto; }
.chart text { fill: var(--muted); font-size: 11px; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
.chart text.value { fill: var(--text); font-variant-numeric: tabular-nums; }
.chart text.big-num { fill: var(--text); font-size: 28px; font-weight: 700; }
.chart circle, .chart circle.seg { fill: none; stroke-width: 26; }
.chart circle.track { stroke: var(--panel-2); }
.chart .axis { stroke: var(--line); } .chart .median { stroke: var(--link); stroke-dasharray: 4 3; }
.chart .bar-bg { fill: var(--panel-2); }
.chart .ACCEPT { fill: var(--ok); stroke: var(--ok); } .chart .APPROVED { fill: #56d4a0; stroke: #56d4a0; }
.chart .ESCALATE { fill: var(--warn); stroke: var(--warn); } .chart .DENIED { fill: #9a7b2c; stroke: #9a7b2c; }
.chart .REJECT { fill: var(--bad); stroke: var(--bad); } .chart .NEEDS_REVIEW { fill: var(--review); stroke: var(--review); }
.chart .PENDING, .chart .NOT_RUN { fill: var(--none); stroke: var(--none); }
.chart rect.swatch, .chart rect.bar, .chart rect.bar-bg { stroke: none; }
section.group { margin-top: 8px; }
.group-head { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; }
@media print { details.cycle { break-inside: avoid; } }
`;
