// The page `GET /reports` and `GET /reports/{simulation_id}` answer a browser that sends no token
// (docs/http-api.md): one constant, self-contained HTML page that holds nothing of a claim. It asks for the
// intake token, keeps it for the tab only (sessionStorage), fetches the same address with
// `Authorization: Bearer …` and replaces itself with the report; the API's error (a refused token, a
// missing report) is shown as text. Its policy allows its own script and style and the report's (the report
// is written into this document, so it runs under this policy), and calls to its own origin.
import { REPORT_CSP } from "./render.ts";
import { cspFor } from "./csp.ts";

const TOKEN_PAGE_CSS = `
:root { color-scheme: dark; --bg: #0f1419; --panel: #171d25; --line: #2c3642; --text: #e6edf3; --muted: #9fb0c0; --link: #7cc4ff; --bad: #ff7b72; }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 640px; margin: 0 auto; padding: 24px; }
form { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; display: flex; gap: 10px; flex-wrap: wrap; align-items: center; }
input, button { font: inherit; color: var(--text); background: #1e2631; border: 1px solid var(--line); border-radius: 6px; padding: 5px 8px; }
button { cursor: pointer; background: #21405f; border-color: var(--link); }
.muted { color: var(--muted); } .msg { min-height: 1.5em; font-weight: 600; color: var(--bad); }
`;

const TOKEN_PAGE_SCRIPT = `(function () {
"use strict";
var KEY = "claims-intake-token";
var $ = function (id) { return document.getElementById(id); };
function show(html) { document.open(); document.write(html); document.close(); }
function load(t) {
  $("msg").textContent = "Loading…";
  fetch(location.pathname + location.search, { headers: { Authorization: "Bearer " + t, Accept: "text/html" }, credentials: "omit", cache: "no-store" })
    .then(function (r) { return r.text().then(function (body) { return { r: r, body: body }; }); })
    .then(function (x) {
      if (x.r.ok) { show(x.body); return; }
      if (x.r.status === 401 || x.r.status === 403) sessionStorage.removeItem(KEY);
      var text = "HTTP " + x.r.status;
      try { var e = JSON.parse(x.body).error; if (e) text += " " + e.code + ": " + e.message; } catch (err) {}
      $("msg").textContent = text;
    })
    .catch(function (err) { $("msg").textContent = "The API did not answer: " + err.message; });
}
$("login").addEventListener("submit", function (ev) {
  ev.preventDefault();
  var t = $("token").value.trim(); if (!t) return;
  sessionStorage.setItem(KEY, t); $("token").value = ""; load(t);
});
var saved = sessionStorage.getItem(KEY); if (saved) load(saved);
})();`;

/** The report policy's hash sources (its script's and its style's), allowed here too. */
function reportSources(directive: "script-src" | "style-src"): string {
  const part = REPORT_CSP.split("; ").find((p) => p.startsWith(`${directive} `));
  return part?.slice(directive.length + 1) ?? "";
}

/** The token page's policy: its own script and style, the report's, and `connect-src 'self'`. */
export const TOKEN_PAGE_CSP = cspFor({ script: TOKEN_PAGE_SCRIPT, style: TOKEN_PAGE_CSS, connect: true })
  .replace(/script-src ([^;]+)/, (_, own: string) => `script-src ${own} ${reportSources("script-src")}`)
  .replace(/style-src ([^;]+)/, (_, own: string) => `style-src ${own} ${reportSources("style-src")}`);

/** The page (a constant: nothing of a claim, no secret). */
export function renderTokenPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Claims Crew — report</title>
<style>${TOKEN_PAGE_CSS}</style>
</head>
<body>
<main>
<h1>Claims Crew — report</h1>
<p class="muted">This report needs the intake token (CLAIMS_API_TOKEN). It is kept for this tab only.</p>
<form id="login"><label for="token">Intake token</label> <input id="token" type="password" autocomplete="off"> <button type="submit">Open the report</button></form>
<p id="msg" class="msg" role="status"></p>
</main>
<script>${TOKEN_PAGE_SCRIPT}</script>
</body>
</html>
`;
}

/** Whether an Accept header prefers HTML to JSON (a browser's navigation does; curl's default and API clients do not). */
export function prefersHtml(accept: string | undefined): boolean {
  const q = (type: string) =>
    Math.max(
      0,
      ...(accept ?? "")
        .split(",")
        .map((part) => part.trim().split(";"))
        .filter(([media]) => media?.trim().toLowerCase() === type)
        .map(([, ...params]) => {
          const qp = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
          return qp === undefined ? 1 : Number(qp.slice(2)) || 0;
        }),
    );
  return q("text/html") > 0 && q("text/html") >= q("application/json");
}
