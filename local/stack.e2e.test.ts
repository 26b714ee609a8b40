// End to end: `claims serve` as a child process, the bundled scenarios submitted over HTTP in order,
// every verdict checked against the expected one, the claim records as GET /claims/{id} shows them,
// the HTML report, events.jsonl (one ClaimVerdict per decided claim, a RefundExecuted per ACCEPT,
// a ClaimNeedsReview per claim in review), and a clean exit on SIGTERM.
import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseScenarios } from "../core/history/scenarios.ts";
import type { Scenario } from "../core/history/scenarios.ts";
import { scenarioBody } from "../core/history/scenarios.ts";
import { SCENARIOS_PATH, TEST_NOW } from "./testing/stack-fixture.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = randomBytes(16).toString("hex");
const SIMULATION_ID = `e2e_${randomBytes(4).toString("hex")}`;
// AWAITING_RETURN: an ACCEPT that waits for its item (the bundled sports gear, docs/returns.md) is decided.
const FINAL = ["DECIDED", "NEEDS_REVIEW", "AWAITING_RETURN"];

type View = {
  claim_id: string;
  status: string;
  verdict?: string;
  reason_code?: string;
  executed?: boolean;
  outcome?: string;
  proposal?: unknown;
  dfid: string;
  simulation_id?: string;
};
type Row = { scenario: Scenario; view: View };
type BusLine = { "detail-type": string; source: string; detail: Record<string, unknown> };

let dataDir: string;
let child: ChildProcessWithoutNullStreams;
let url = "";
let stdout = "";
const exited = {
  code: null as number | null,
  signal: null as string | null,
  done: undefined as Promise<void> | undefined,
};
const rows: Row[] = [];

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
}

/** Polls GET /claims/{id} until the claim is final (a claim runs in well under a second; 20 s is the give-up point). */
async function finalView(claimId: string): Promise<View> {
  let last = "";
  for (let i = 0; i < 400; i++) {
    const res = await api("GET", `/claims/${claimId}`);
    last = res.text;
    const view = JSON.parse(res.text) as View;
    if (res.status === 200 && FINAL.includes(view.status)) return view;
    await sleep(50);
  }
  throw new Error(`claim ${claimId} never became final; last answer: ${last}`);
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "claims-e2e-"));
  child = spawn(
    process.execPath,
    ["bin/claims.mjs", "serve", "--port", "0", "--data-dir", dataDir, "--now", new Date(TEST_NOW).toISOString()],
    {
      cwd: ROOT,
      env: { ...process.env, CLAIMS_API_TOKEN: TOKEN, LLM_PROVIDER: "rules", CLAIMS_LOG_LEVEL: "ERROR" },
    },
  );
  exited.done = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      exited.code = code;
      exited.signal = signal;
      resolve();
    }),
  );
  child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
  url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`claims serve printed no URL within 30 s:\n${stdout}`)), 30_000);
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
      const m = /listening on (http:\/\/\S+)/.exec(stdout);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.done?.then(() => reject(new Error(`claims serve exited early (${exited.code}):\n${stdout}`)));
  });

  // In file order: later scenarios depend on the refunds of earlier ones (the same ledger).
  const scenarios = parseScenarios(readFileSync(SCENARIOS_PATH, "utf8"), SCENARIOS_PATH);
  for (const scenario of scenarios) {
    const res = await api("POST", "/claims", scenarioBody(scenario, SIMULATION_ID, TEST_NOW), {
      "idempotency-key": `${SIMULATION_ID}:${scenario.id}`,
    });
    if (res.status !== 202) throw new Error(`scenario ${scenario.id} was answered ${res.status}: ${res.text}`);
    const { claim_id } = JSON.parse(res.text) as { claim_id: string };
    rows.push({ scenario, view: await finalView(claim_id) });
  }
}, 120_000);

afterAll(async () => {
  if (exited.done && exited.code === null && exited.signal === null) child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

/** The bus journal's lines for this run's claims (read after the server stopped, so it is complete). */
function busLines(): BusLine[] {
  const ids = new Set(rows.map((r) => r.view.claim_id));
  return readFileSync(join(dataDir, "events.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as BusLine)
    .filter((e) => ids.has(String(e.detail.claim_id)));
}

describe("claims serve, end to end over HTTP", () => {
  it("decides every bundled scenario as expected", () => {
    const actual = rows.map(({ scenario, view }) => ({
      id: scenario.id,
      outcome: view.status === "NEEDS_REVIEW" ? "NEEDS_REVIEW" : view.verdict,
      ...(scenario.expected.reason_code ? { reason_code: view.reason_code } : {}),
    }));
    const expected = rows.map(({ scenario }) => ({
      id: scenario.id,
      outcome: scenario.expected.verdict,
      ...(scenario.expected.reason_code ? { reason_code: scenario.expected.reason_code } : {}),
    }));
    expect(actual).toEqual(expected);
  });

  it("shows consistent claim records: flow id, run, proposal for decided claims (but triaged ones), executed only for ACCEPT", () => {
    let triaged = 0;
    for (const { view } of rows) {
      expect(view.dfid).toBe(`dfid_${view.claim_id}`);
      expect(view.simulation_id).toBe(SIMULATION_ID);
      // An ACCEPT that waits for its item (AWAITING_RETURN, docs/returns.md) has executed nothing yet, and one given
      // as an exchange (docs/returns.md#outcomes) never moves money.
      expect(view.executed === true).toBe(
        view.verdict === "ACCEPT" && view.status !== "AWAITING_RETURN" && view.outcome !== "EXCHANGE",
      );
      // A claim triage rejected was decided without the crew: no proposal (docs/kernel.md).
      if (view.status === "DECIDED" && view.proposal === undefined) {
        expect(view.verdict).toBe("REJECT");
        triaged++;
      } else if (view.status === "AWAITING_RETURN") expect(view.verdict).toBe("ACCEPT");
      else if (view.status !== "DECIDED") expect(view.verdict).toBeUndefined();
    }
    // The 7 triage rejections of the EUR rows, and JP2's CURRENCY_MISMATCH (a claim in EUR on a JPY order).
    expect(triaged).toBe(8);
  });

  it("answers a repeated submission with its Idempotency-Key with the same claim", async () => {
    const first = rows[0]!;
    const res = await api("POST", "/claims", scenarioBody(first.scenario, SIMULATION_ID, TEST_NOW), {
      "idempotency-key": `${SIMULATION_ID}:${first.scenario.id}`,
    });
    expect(res.status).toBe(202);
    expect(JSON.parse(res.text).claim_id).toBe(first.view.claim_id);
  });

  it("serves the run's HTML report", async () => {
    const res = await api("GET", `/reports/${SIMULATION_ID}`);
    expect(res.status).toBe(200);
    for (const { view } of rows) expect(res.text).toContain(view.claim_id);
  });

  it("stops cleanly on SIGTERM with exit code 0", async () => {
    child.kill("SIGTERM");
    await exited.done;
    expect({ code: exited.code, signal: exited.signal }).toEqual({ code: 0, signal: null });
    expect(stdout).toContain("Stopped.");
  });

  it("journals one ClaimVerdict per decided claim with unique verdict ids, a RefundExecuted per ACCEPT and a ClaimNeedsReview per claim in review", () => {
    const lines = busLines();
    const of = (type: string) => lines.filter((e) => e["detail-type"] === type);
    expect(lines.every((e) => e.source === "claims.kernel")).toBe(true);

    const verdicts = of("ClaimVerdict");
    // A claim waiting for its item (AWAITING_RETURN) is decided: its verdict is journalled too.
    const decided = rows.filter((r) => r.view.status === "DECIDED" || r.view.status === "AWAITING_RETURN");
    expect(verdicts.map((e) => e.detail.claim_id).sort()).toEqual(decided.map((r) => r.view.claim_id).sort());
    expect(new Set(verdicts.map((e) => e.detail.verdict_id)).size).toBe(verdicts.length);
    for (const r of decided) {
      const v = verdicts.find((e) => e.detail.claim_id === r.view.claim_id)!;
      expect({
        verdict: v.detail.verdict,
        reason_code: v.detail.reason_code,
        simulation_id: v.detail.simulation_id,
      }).toEqual({ verdict: r.view.verdict, reason_code: r.view.reason_code, simulation_id: SIMULATION_ID });
    }

    // An ACCEPT that asks the item back journals its ReturnRequested, and no RefundExecuted until the item is back.
    const accepted = decided.filter((r) => r.view.verdict === "ACCEPT" && r.view.status === "DECIDED");
    const awaiting = decided.filter((r) => r.view.status === "AWAITING_RETURN").map((r) => r.view.claim_id);
    expect(awaiting).toHaveLength(3);
    expect(
      of("ReturnRequested")
        .map((e) => e.detail.claim_id)
        .sort(),
    ).toEqual([...awaiting].sort());
    // An ACCEPT given as an exchange journals its ExchangeRequested and never a refund (docs/returns.md#outcomes).
    const exchanged = accepted.filter((r) => r.view.outcome === "EXCHANGE").map((r) => r.view.claim_id);
    expect(exchanged).toHaveLength(1);
    expect(of("ExchangeRequested").map((e) => e.detail.claim_id)).toEqual(exchanged);
    const refunds = of("RefundExecuted");
    expect(refunds.map((e) => e.detail.claim_id).sort()).toEqual(
      accepted
        .map((r) => r.view.claim_id)
        .filter((id) => !exchanged.includes(id))
        .sort(),
    );
    for (const e of refunds)
      expect(e.detail.verdict_id).toBe(
        verdicts.find((v) => v.detail.claim_id === e.detail.claim_id)?.detail.verdict_id,
      );

    const review = rows.filter((r) => r.view.status === "NEEDS_REVIEW");
    const reviews = of("ClaimNeedsReview");
    expect(reviews.map((e) => [e.detail.claim_id, e.detail.reason_code]).sort()).toEqual(
      review.map((r) => [r.view.claim_id, r.view.reason_code]).sort(),
    );
  });
});
