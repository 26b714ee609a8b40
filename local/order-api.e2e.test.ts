// End to end with the shop's order API: the example order server (examples/order-server, a child process) and
// `claims serve` with ORDER_SOURCE=http reading it with the token from ORDER_API_TOKEN_FILE. The kernel decides on
// the API's orders, not the table's (ord_003 is in the bundled config, so in the table, but not on the server);
// then, with both stopped, `claims replay` and `claims backtest` run from the recorded order facts alone.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const INTAKE_TOKEN = randomBytes(16).toString("hex");
const SHOP_TOKEN = `shop_${randomBytes(12).toString("hex")}`;
// AWAITING_RETURN: an ACCEPT that waits for its item (the bundled sports gear, docs/returns.md) is decided.
const FINAL = ["DECIDED", "NEEDS_REVIEW", "AWAITING_RETURN"];

type View = {
  claim_id: string;
  status: string;
  verdict?: string;
  reason_code?: string;
  reason?: string;
  executed?: boolean;
};
type Child = {
  process: ChildProcessWithoutNullStreams;
  url: string;
  exited: Promise<number | null>;
  output: () => string;
};

let dir: string;
let shop: Child;
let serve: Child;
const views: Record<string, View> = {};

/** Starts `args` under node and resolves with the URL it prints on `pattern`. */
async function start(args: string[], env: Record<string, string>, pattern: RegExp): Promise<Child> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env } });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let out = "";
  child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} printed no URL within 30 s:\n${out}`)), 30_000);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const m = pattern.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then((code) => reject(new Error(`${args[0]} exited early (${code}):\n${out}`)));
  });
  return { process: child, url, exited, output: () => out };
}

async function stop(child: Child | undefined): Promise<void> {
  if (!child || child.process.exitCode !== null) return;
  child.process.kill("SIGTERM");
  await child.exited;
}

async function submit(claim: Record<string, unknown>): Promise<View> {
  const res = await fetch(`${serve.url}/claims`, {
    method: "POST",
    headers: { authorization: `Bearer ${INTAKE_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ claim }),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`POST /claims answered ${res.status}: ${text}`);
  const { claim_id } = JSON.parse(text) as { claim_id: string };
  for (let i = 0; i < 400; i++) {
    const view = (await (
      await fetch(`${serve.url}/claims/${claim_id}`, { headers: { authorization: `Bearer ${INTAKE_TOKEN}` } })
    ).json()) as View;
    if (FINAL.includes(view.status)) return view;
    await sleep(50);
  }
  throw new Error(`claim ${claim_id} never became final`);
}

function claims(args: string[]) {
  const run = spawnSync(process.execPath, ["bin/claims.mjs", ...args], { cwd: ROOT, encoding: "utf8" });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "claims-orders-"));
  const tokenFile = join(dir, "shop-token");
  writeFileSync(tokenFile, `${SHOP_TOKEN}\n`, { mode: 0o600 });
  shop = await start(
    ["examples/order-server/server.mjs"],
    { PORT: "0", ORDER_API_TOKEN_FILE: tokenFile },
    /listening on (http:\/\/\S+)/,
  );
  serve = await start(
    ["bin/claims.mjs", "serve", "--port", "0", "--data-dir", join(dir, "data")],
    {
      CLAIMS_API_TOKEN: INTAKE_TOKEN,
      LLM_PROVIDER: "rules",
      CLAIMS_LOG_LEVEL: "ERROR",
      ORDER_SOURCE: "http",
      ORDER_API_URL: shop.url,
      ORDER_API_TOKEN_FILE: tokenFile,
    },
    /listening on (http:\/\/\S+)/,
  );
  // Three claims on three orders, decided side by side (each polled to its end on its own).
  [views.accept, views.category, views.unknown] = await Promise.all([
    submit({ order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead" }),
    submit({ order_id: "ord_004", amount_eur: 50, category: "home", reason: "Broken" }),
    submit({ order_id: "ord_003", amount_eur: 100, category: "electronics", reason: "Broken" }),
  ]);
}, 120_000);

afterAll(async () => {
  await stop(serve);
  await stop(shop);
  rmSync(dir, { recursive: true, force: true });
});

describe("claims serve with ORDER_SOURCE=http against the example order server", () => {
  it("lists the routes it answers, and not the payment webhook, which answers 404 without a webhook secret", async () => {
    expect(serve.output()).toMatch(/routes +.*POST \/claims.*GET \/reviews \(reviewer\)/);
    expect(serve.output()).not.toContain("/webhooks/stripe");
    const webhook = await fetch(`${serve.url}/webhooks/stripe`, { method: "POST", body: "{}" });
    expect(webhook.status).toBe(404);
  });

  it("checked the order API at start, and says ok on /health", async () => {
    expect(serve.output()).toContain(`orders   the shop's order API at ${shop.url} answers`);
    expect(await (await fetch(`${serve.url}/health`)).json()).toEqual({ status: "ok" });
  });

  it("says degraded on /health, and why at start, when the token is wrong (a second server beside the first)", async () => {
    const wrong = await start(
      ["bin/claims.mjs", "serve", "--port", "0", "--data-dir", join(dir, "data-wrong-token")],
      {
        CLAIMS_API_TOKEN: INTAKE_TOKEN,
        LLM_PROVIDER: "rules",
        CLAIMS_LOG_LEVEL: "ERROR",
        ORDER_SOURCE: "http",
        ORDER_API_URL: shop.url,
        ORDER_API_TOKEN: "not-the-shops-token",
        ORDER_API_TOKEN_FILE: "",
      },
      /(Ready) in \d+ ms/,
    );
    try {
      expect(wrong.output()).toMatch(
        /serving degraded \(GET \/health says so\): order API GET .*: answered HTTP 401: it refused the token \(check ORDER_API_TOKEN\)/,
      );
      expect(wrong.output()).not.toContain("not-the-shops-token");
      const url = /listening on (http:\/\/\S+)/.exec(wrong.output())![1]!;
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "degraded", orders: "unreachable" });
    } finally {
      await stop(wrong);
    }
  }, 120_000);

  it("decides on the API's orders: its category, and ORDER_NOT_FOUND for an order only the table has", () => {
    expect(views.accept).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", executed: true });
    expect(views.category).toMatchObject({ verdict: "REJECT", reason_code: "CATEGORY_NOT_ALLOWED" });
    expect(views.unknown).toMatchObject({ verdict: "REJECT", reason_code: "ORDER_NOT_FOUND" });
    // Who had no such order: the shop's API answered 404 (not "the context store", which this server does not read).
    expect(views.unknown!.reason).toBe(
      "Order 'ord_003' not found: the shop's order API has no such order (it answered 404)",
    );
  });

  it("refuses a request without the shop's token (the example checks it)", async () => {
    const res = await fetch(`${shop.url}/orders/ord_001`, { headers: { authorization: "Bearer wrong" } });
    expect(res.status).toBe(401);
    const ok = await fetch(`${shop.url}/orders/ord_001`, { headers: { authorization: `Bearer ${SHOP_TOKEN}` } });
    expect(await ok.json()).toMatchObject({ order_id: "ord_001", amount: 299.99, payment_ref: "pi_3Qd0001" });
  });

  it("replays and backtests from the recorded order facts with the order server stopped", async () => {
    await stop(serve);
    await stop(shop);
    const replay = claims(["replay", views.accept!.claim_id, "--data-dir", join(dir, "data")]);
    expect(replay.stderr).toBe("");
    expect(replay.stdout).toMatch(/Identical: ACCEPT VALIDATION_PASSED/);
    expect(replay.code).toBe(0);
    const backtest = claims([
      "backtest",
      "--policy",
      "scenarios/config.yaml",
      "--data-dir",
      join(dir, "data"),
      "--json",
    ]);
    expect(backtest.code).toBe(0);
    const report = JSON.parse(backtest.stdout) as { evaluated: number; not_evaluable: unknown[]; flips: unknown[] };
    expect(report).toMatchObject({ evaluated: 3, not_evaluable: [], flips: [] });
  }, 120_000);
});
