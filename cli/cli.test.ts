import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { createDynamoPorts, createTable } from "../adapters/aws/index.ts";
import { localClientConfig, startEmulators } from "../local/emulators.ts";
import { claimsInProcess } from "./cli-in-process.test-kit.ts";

// The CLI as a user runs it: a child process of bin/claims.mjs, with a throwaway data directory — for the bundled
// batch, a replay, --version and every command's --help (each command's wiring in the built CLI: it loads, exits 0,
// prints its usage). The other cases run the same program in this process (cli/cli-in-process.test-kit.ts: its
// parsing, commands, messages and exit codes), without a child's 0.3–1.7 CPU-s start each (issue 36).
const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "bin/claims.mjs");

async function claims(args: string[], dataDir?: string, env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [bin, ...args, ...(dataDir ? ["--data-dir", dataDir] : [])],
      { cwd: root, env: { ...process.env, NO_COLOR: "1", LLM_PROVIDER: "rules", ...env }, maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** `claims ARGS` in this process, as `claims` above runs it in a child. */
function inProcess(args: string[], dataDir?: string, env: Record<string, string> = {}) {
  return claimsInProcess([...args, ...(dataDir ? ["--data-dir", dataDir] : [])], { LLM_PROVIDER: "rules", ...env });
}

describe("claims batch --json (in-process)", () => {
  it("prints the verdict contract on stdout, matches every scenario, writes the audit and report, and replays a claim", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const { code, stdout, stderr } = await claims(
      ["batch", "--json", "--now", "2026-06-01T12:00:00Z", "--in-process"],
      dataDir,
    );
    expect(code, stderr).toBe(0);
    const rows = JSON.parse(stdout) as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThanOrEqual(19);
    for (const row of rows) {
      // A race's rows carry its group answer too (`race`).
      expect(
        Object.keys(row)
          .filter((k) => k !== "race")
          .sort(),
      ).toEqual([
        "amount_eur",
        "claim_id",
        "executed",
        "expected",
        "id",
        "label",
        "matches",
        "order_id",
        "reason",
        "reason_code",
        "verdict",
      ]);
      expect(row.verdict).toBe(row.expected);
    }
    expect(rows.find((r) => r.id === "A")).toMatchObject({
      verdict: "ACCEPT",
      executed: true,
      order_id: "ord_001",
      amount_eur: 299.99,
    });
    expect(stderr).toContain("scenarios match");
    const run = "claims_batch_001_20260601T120000Z";
    expect(readFileSync(join(dataDir, "runs", run, "report.html"), "utf8")).toContain(String(rows[0]!.claim_id));
    const replay = await claims(["replay", String(rows.find((r) => r.id === "E")!.claim_id)], dataDir);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/Identical: ACCEPT VALIDATION_PASSED/);
    // PB's refund declined (a payment step) and CLOSEd as paid out of band: its decision and PB2's replay identical.
    expect(rows.filter((r) => String(r.id).startsWith("PB")).map((r) => [r.id, r.verdict])).toEqual([
      ["PB", "ACCEPT"],
      ["PB-declined", "FAILED"],
      ["PB-close", "CLOSED"],
      ["PB2", "ESCALATE"],
    ]);
    for (const [id, outcome] of [
      ["PB", "ACCEPT VALIDATION_PASSED"],
      ["PB2", "ESCALATE PRIOR_DECISION_ON_ORDER"],
    ]) {
      const r = await inProcess(["replay", String(rows.find((x) => x.id === id)!.claim_id)], dataDir);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain(`Identical: ${outcome}`);
    }
    // The returns (docs/returns.md): RT1 waited for its rowing machine, paid once on its delivery; its replay decides
    // the return again alike.
    expect(rows.filter((r) => String(r.id).startsWith("RT1")).map((r) => [r.id, r.verdict, r.executed])).toEqual([
      ["RT1", "ACCEPT", false],
      ["RT1-shipped", "WAIT", false],
      ["RT1-delivered", "PAY", true],
      ["RT1-again", "RECORDED", false],
    ]);
    const returned = await inProcess(["replay", String(rows.find((x) => x.id === "RT1")!.claim_id)], dataDir);
    expect(returned.stdout).toMatch(/return +2 return event\(s\) recorded, 1 outcome\(s\) decided again alike/);
  }, 90_000); // the whole bundled run in process (47 claims and their steps), then four replays

  it("exits 1 when a verdict does not match the expected one", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const scenarios = join(dataDir, "s.yaml");
    writeFileSync(
      scenarios,
      'scenarios:\n  - id: X\n    label: "wrong on purpose"\n    context:\n      claim: { order_id: ord_001, amount_eur: 10, category: electronics, reason: "x" }\n    expected: REJECT\n',
    );
    const { code, stdout } = await inProcess(
      ["batch", scenarios, "--json", "--now", "2026-06-01T12:00:00Z", "--in-process"],
      dataDir,
    );
    expect(code).toBe(1);
    expect(JSON.parse(stdout)[0]).toMatchObject({ id: "X", verdict: "ACCEPT", expected: "REJECT" });
  });

  it("refuses a scenario file with a mistake, naming file, row and field, before running anything", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const scenarios = join(dataDir, "bad.yaml");
    writeFileSync(
      scenarios,
      'scenarios:\n  - id: X\n    label: "bad"\n    context:\n      claim: { order_id: ord_001, amount_eur: "ten", category: electronics }\n    expected: ACCEPT\n',
    );
    const { code, stderr, stdout } = await inProcess(
      ["batch", scenarios, "--now", "2026-06-01T12:00:00Z", "--in-process"],
      dataDir,
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/bad\.yaml:5 row 'X' scenarios\[0\]\.context/);
    expect(stdout).toBe("");
  });
});

describe("claims batch against a model that is down", () => {
  /** A scenario file of a structured and a free-text claim, and the URL of a port nobody listens on. */
  async function downModel() {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const scenarios = join(dataDir, "s.yaml");
    writeFileSync(
      scenarios,
      [
        "scenarios:",
        "  - id: S",
        '    label: "structured"',
        "    context:",
        '      claim: { order_id: ord_001, amount_eur: 299.99, category: electronics, reason: "dead" }',
        "    expected: ACCEPT",
        "  - id: T",
        '    label: "free text"',
        "    context:",
        '      claim_text: "I bought order ord_006 for 299.99 EUR, the screen is dead"',
        "    expected: ACCEPT",
        "",
      ].join("\n"),
    );
    // The seed's Ollama URL without /v1, as a new user sets it.
    return { dataDir, scenarios, port, env: { LLM_PROVIDER: "openai", OLLAMA_BASE_URL: `http://127.0.0.1:${port}` } };
  }

  it("says so before the first claim and stops there: the summary of what ran, the report, the --json rows so far, exit 1", async () => {
    const { dataDir, scenarios, port, env } = await downModel();
    const { code, stdout, stderr } = await inProcess(
      ["batch", scenarios, "--now", "2026-06-01T12:00:00Z"],
      dataDir,
      env,
    );
    expect(code, stderr).toBe(1);
    expect(stdout).toContain(
      `LLM check : FAILED: LLM endpoint http://127.0.0.1:${port}/v1 (model gemma3:4b) is unreachable`,
    );
    expect(stdout).not.toMatch(/Verdict {2}:/);
    expect(stdout).toMatch(/The run stopped before its first claim \(2 not run\).*--keep-going/);
    expect(existsSync(join(dataDir, "runs", "claims_batch_001_20260601T120000Z", "report.html"))).toBe(true);
    const json = await inProcess(["batch", scenarios, "--now", "2026-06-01T12:00:00Z", "--json"], dataDir, env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual([]);
    expect(`${stdout}${stderr}`).not.toMatch(/\n\s+at .+:\d+:\d+/);
  }, 180_000);

  it("with --keep-going ends every claim in NEEDS_REVIEW LLM_UNREACHABLE, prints the summary, writes the report and exits 1, without a stack trace", async () => {
    const { dataDir, scenarios, port, env } = await downModel();
    const { code, stdout, stderr } = await inProcess(
      ["batch", scenarios, "--now", "2026-06-01T12:00:00Z", "--keep-going"],
      dataDir,
      env,
    );
    const url = `http://127.0.0.1:${port}/v1`;
    expect(code, stderr).toBe(1);
    expect(stdout).toContain(`LLM check : FAILED: LLM endpoint ${url} (model gemma3:4b) is unreachable: ECONNREFUSED`);
    expect(stdout.match(/Verdict {2}: NEEDS_REVIEW \(LLM_UNREACHABLE\)/g)).toHaveLength(2);
    expect(stdout).toMatch(/0\/2 scenarios match/);
    expect(stdout).toMatch(/The LLM endpoint check failed: .*start the model server and run again/);
    expect(readFileSync(join(dataDir, "runs", "claims_batch_001_20260601T120000Z", "report.html"), "utf8")).toContain(
      "LLM_UNREACHABLE",
    );
    expect(`${stdout}${stderr}`).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(stderr).toBe("");
  }, 180_000);
});

describe("DIR sample 35's formats through the CLI (fixtures of our own in scenarios/fixtures/)", () => {
  const fixtures = join(root, "scenarios/fixtures");
  const pairs = [
    ["dir-seed-era", "2026-03-20T09:00:00Z"],
    ["roa-dir-v1", "2026-07-10T12:00:00Z"],
  ] as const;

  it.each(pairs)(
    "runs the %s files unchanged: every verdict as expected, mappings and ignored keys said once",
    async (name, now) => {
      const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
      const { code, stdout, stderr } = await inProcess(
        [
          "batch",
          join(fixtures, `${name}.scenarios.yaml`),
          "--config",
          join(fixtures, `${name}.config.yaml`),
          "--now",
          now,
          "--json",
          "--in-process",
        ],
        dataDir,
      );
      expect(code, stderr).toBe(0);
      const rows = JSON.parse(stdout) as { id: string; verdict: string; expected: string }[];
      expect(rows.length).toBeGreaterThanOrEqual(6);
      for (const row of rows) expect(row.verdict, row.id).toBe(row.expected);
      expect(stderr.match(/^ {2}Ignored {3}: /gm)).toHaveLength(1);
      expect(stderr).toMatch(
        /Ignored {3}: database, simulation\.seeds, agents\[\]\.priority, agents\[\]\.crew, .*scenarios\[\]\.notes/,
      );
      expect(stderr).toMatch(/Read as {3}: agents\[0\]\.version missing: 1\.0\.0 assumed/);
      expect(stderr).toMatch(/Read as {3}: scenario ids from their labels: /);
    },
  );

  it("explains a ✗ with expected and actual reason codes, and why a second refund of an order differs from the seed", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const scenarios = join(dataDir, "s.yaml");
    // As the sample's E: a second refund of the order the first row refunded, expected ACCEPT.
    writeFileSync(
      scenarios,
      readFileSync(join(fixtures, "roa-dir-v1.scenarios.yaml"), "utf8").replace(
        '    expected: REJECT\n    notes: "Second refund',
        '    expected: { verdict: ACCEPT, reason_code: VALIDATION_PASSED }\n    notes: "Second refund',
      ),
    );
    const { code, stdout } = await inProcess(
      [
        "batch",
        scenarios,
        "--config",
        join(fixtures, "roa-dir-v1.config.yaml"),
        "--now",
        "2026-07-10T12:00:00Z",
        "--in-process",
      ],
      dataDir,
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /Verdict {2}: REJECT \(EXCEEDS_REFUNDABLE_BALANCE\) {2}expected ACCEPT \(VALIDATION_PASSED\) {2}✗/,
    );
    expect(stdout).toMatch(
      /✗ REJECT +R5 .*\(expected ACCEPT VALIDATION_PASSED, got REJECT EXCEEDS_REFUNDABLE_BALANCE\)/,
    );
    expect(stdout).toMatch(/Why {6}: ord_201 was already refunded in this run \(89\.90 EUR by R1\)/);
  });

  it.each([
    [
      "dir-seed-era.config.yaml",
      /a configuration — valid[\s\S]*Format {4}: DIR sample 35, seed-era[\s\S]*refundable: garden, toys, books[\s\S]*Ignored {3}: database \(/,
    ],
    [
      "roa-dir-v1.config.yaml",
      /Format {4}: DIR sample 35, roa\.dir\/v1[\s\S]*kitchen_agent_v2 v1\.0\.0, accepted by the registry[\s\S]*escalate below confidence 0\.8/,
    ],
    [
      "dir-seed-era.scenarios.yaml",
      /a scenario file with 7 scenarios — valid[\s\S]*W7 +expects ACCEPT[\s\S]*from the labels .*G1, T2/,
    ],
  ])("config check %s says what it understood", async (file, expected) => {
    const { code, stdout, stderr } = await inProcess([
      "config",
      "check",
      join(fixtures, file),
      "--now",
      "2026-03-20T09:00:00Z",
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(expected);
  });

  it("config check says the shadow policy it read, and nothing of one when the file has none", async () => {
    const dir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const file = join(dir, "c.yaml");
    const shadow = [
      "shadow_policy:",
      "  agents:",
      '    - agent_id: "claims_agent_v1"',
      "      contract: { role: EXECUTOR, allowed_policy_types: [REFUND, ESCALATE], authorized_categories: [home] }",
      "      claims_bounds: { max_refund_without_escalation: 100, return_window_days: 7 }",
      "",
    ].join("\n");
    const bundled = readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8");
    writeFileSync(file, bundled.replace("context_store:", `${shadow}context_store:`));
    const { code, stdout, stderr } = await inProcess(["config", "check", file]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(
      /Shadow {4}: claims_agent_v1 v1\.0\.0: decided beside[\s\S]*refundable: home; up to 100\.00 EUR/,
    );
    const plain = join(dir, "plain.yaml");
    writeFileSync(plain, bundled);
    const without = await inProcess(["config", "check", plain]);
    expect(without.stdout).toMatch(/a configuration — valid/);
    expect(without.stdout).not.toContain("Shadow");
  });

  it("config check exits 2 with the errors, at the key's line, for a broken file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const file = join(dir, "c.yaml");
    writeFileSync(
      file,
      readFileSync(join(fixtures, "roa-dir-v1.config.yaml"), "utf8").replace(
        "max_refund_without_escalation:",
        "max_refund_without_escallation:",
      ),
    );
    const line =
      readFileSync(file, "utf8")
        .split("\n")
        .findIndex((l) => l.includes("escallation")) + 1;
    const { code, stdout, stderr } = await inProcess(["config", "check", file]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(
      `c.yaml:${line} row 'kitchen_agent_v2' agents[0].claims_bounds.max_refund_without_escallation: unknown key "max_refund_without_escallation" — did you mean "max_refund_without_escalation"?`,
    );
  });

  it("refuses an agent version the registry refuses before running: a clean message, and an error object with --json", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const config = join(dataDir, "c.yaml");
    writeFileSync(
      config,
      readFileSync(join(fixtures, "dir-seed-era.config.yaml"), "utf8").replace(
        '  - agent_id: "returns_agent_v1"\n',
        '  - agent_id: "returns_agent_v1"\n    version: "2.0.0"\n',
      ),
    );
    const scenarios = join(fixtures, "dir-seed-era.scenarios.yaml");
    const json = await inProcess(
      ["batch", scenarios, "--config", config, "--now", "2026-03-20T09:00:00Z", "--json"],
      dataDir,
    );
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: "AGENT_REFUSED",
        message: expect.stringMatching(/returns_agent_v1 v2\.0\.0 was refused by the registry: .*1\.x/),
      },
    });
    expect(json.stderr).toMatch(/^claims: agent returns_agent_v1 v2\.0\.0 was refused/m);
    expect(json.stderr).not.toMatch(/\n\s+at /);
    const check = await inProcess(["config", "check", config]);
    expect(check.code).toBe(2);
    expect(check.stdout).toMatch(/a configuration — INVALID/);
    expect(check.stderr).toMatch(/was refused by the registry/);
  });
});

describe("claims load-orders", () => {
  it("writes the orders of the file it is given (never a default) into a table the kernel reads, and names a missing table", async () => {
    const emulators = await startEmulators();
    const keys = {
      AWS_ACCESS_KEY_ID: emulators.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: emulators.credentials.secretAccessKey,
    };
    const client = new DynamoDBClient(localClientConfig(emulators.dynamodbEndpoint));
    try {
      await createTable(client, "claims-orders-test");
      const unnamed = await inProcess(
        ["load-orders", "--table", "claims-orders-test", "--endpoint", emulators.dynamodbEndpoint],
        undefined,
        keys,
      );
      expect(unnamed.code).toBe(2);
      expect(unnamed.stderr).toMatch(/required option '--config <path>' not specified/);
      const ok = await inProcess(
        [
          "load-orders",
          "--table",
          "claims-orders-test",
          "--config",
          "scenarios/config.yaml",
          "--endpoint",
          emulators.dynamodbEndpoint,
        ],
        undefined,
        keys,
      );
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/Loaded \d+ orders/);
      const { orders } = createDynamoPorts({
        client: DynamoDBDocumentClient.from(client),
        tableName: "claims-orders-test",
      });
      expect(await orders.getOrder("ord_002")).toMatchObject({
        order_id: "ord_002",
        amount: 1200,
        category: "electronics",
      });
      const missing = await inProcess(
        [
          "load-orders",
          "--table",
          "no-such-table",
          "--config",
          "scenarios/config.yaml",
          "--endpoint",
          emulators.dynamodbEndpoint,
        ],
        undefined,
        keys,
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/table no-such-table not found/);
    } finally {
      client.destroy();
      await emulators.stop();
    }
  });
});

describe("claims list", () => {
  it("asks GET /claims with the filters and the token, pages on, prints one line per claim; refusals exit 1, usage and connection 2", async () => {
    const seen: string[] = [];
    const view = (i: number) => ({
      claim_id: `clm_${i}`,
      status: "DECIDED",
      verdict: "ACCEPT",
      reason_code: "VALIDATION_PASSED",
      proposal: { order_id: "ord_001", amount_eur: 10 + i },
      dfid: `dfid_clm_${i}`,
    });
    const api = createServer((req, res) => {
      seen.push(`${req.headers.authorization} ${req.url}`);
      const url = new URL(req.url ?? "/", "http://x");
      res.setHeader("content-type", "application/json");
      if (req.headers.authorization !== "Bearer list-token-0123456789")
        return res
          .writeHead(403)
          .end(JSON.stringify({ error: { code: "FORBIDDEN", message: "this route needs the intake token" } }));
      const page = url.searchParams.get("cursor")
        ? { items: [view(3)] }
        : { items: [view(1), view(2)], next_cursor: "2026-06-01T12:00:00.000Z#clm_2" };
      res.end(JSON.stringify(page));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    try {
      const ok = await inProcess(
        ["list", "--url", url, "--status", "decided", "--verdict", "accept", "--since", "2026-06-01", "--limit", "10"],
        undefined,
        { CLAIMS_API_TOKEN: "list-token-0123456789" },
      );
      expect(ok.code, ok.stderr).toBe(0);
      expect(
        ok.stdout
          .trim()
          .split("\n")
          .map((l) => l.split(/\s+/)[0]),
      ).toEqual(["CLAIM", "clm_1", "clm_2", "clm_3"]);
      expect(ok.stdout).toMatch(/^clm_1 +DECIDED +ACCEPT +VALIDATION_PASSED +ord_001 +11\.00 EUR$/m);
      expect(seen[0]).toBe(
        "Bearer list-token-0123456789 /claims?limit=10&status=DECIDED&verdict=ACCEPT&since=2026-06-01T00%3A00%3A00.000Z",
      );
      expect(seen[1]).toMatch(/limit=8&.*cursor=2026-06-01T12%3A00%3A00.000Z%23clm_2$/);
      const json = await inProcess(["list", "--url", url, "--json", "--limit", "2"], undefined, {
        CLAIMS_API_TOKEN: "list-token-0123456789",
      });
      expect((JSON.parse(json.stdout) as { items: unknown[] }).items).toHaveLength(2);
      const refused = await inProcess(["list", "--url", url], undefined, {
        CLAIMS_API_TOKEN: "wrong-token-0123456789",
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/403 FORBIDDEN: this route needs the intake token/);
    } finally {
      api.close();
    }
    const badStatus = await inProcess(["list", "--url", url, "--status", "DONE"], undefined, {
      CLAIMS_API_TOKEN: "some-token-0123456789",
    });
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/--status/);
    const noToken = await inProcess(["list", "--url", url], undefined, { CLAIMS_API_TOKEN: "" });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/no intake token/);
    const down = await inProcess(["list", "--url", url], undefined, { CLAIMS_API_TOKEN: "some-token-0123456789" });
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: .*is claims serve running/);
  }, 120_000);

  it("takes the token from a file or the environment, never from the command line", async () => {
    const seen: string[] = [];
    const api = createServer((req, res) => {
      seen.push(String(req.headers.authorization));
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ items: [] }));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), "claims-token-file-"));
    try {
      const file = join(dir, "token");
      writeFileSync(file, "from-the-file-0123456789\n", { mode: 0o600 });
      const fromFile = await inProcess(["list", "--url", url, "--token-file", file], undefined, {
        CLAIMS_API_TOKEN: "",
      });
      expect(fromFile.code, fromFile.stderr).toBe(0);
      expect(seen).toEqual(["Bearer from-the-file-0123456789"]);
      const onCommandLine = await inProcess(["list", "--url", url, "--token", "secret-on-the-command-line"]);
      expect(onCommandLine.code).toBe(2);
      expect(onCommandLine.stderr).toMatch(/unknown option '--token'/);
      const review = await inProcess(["review", "list", "--url", url, "--token", "secret-on-the-command-line"]);
      expect(review.code).toBe(2);
      expect(review.stderr).toMatch(/unknown option '--token'/);
      // A token no server accepts (under 16 characters) is a configuration error: exit 2, nothing sent.
      const short = await inProcess(["list", "--url", url], undefined, { CLAIMS_API_TOKEN: "short-token" });
      expect(short.code).toBe(2);
      expect(short.stderr).toMatch(/CLAIMS_API_TOKEN is 11 characters long; no server accepts a token shorter than 16/);
      const shortReviewer = await inProcess(["review", "list", "--url", url], undefined, {
        CLAIMS_REVIEWER_TOKEN: "fifteen-chars-x",
      });
      expect(shortReviewer.code).toBe(2);
      expect(shortReviewer.stderr).toMatch(/CLAIMS_REVIEWER_TOKEN is 15 characters long/);
      writeFileSync(join(dir, "short"), "tiny\n", { mode: 0o600 });
      const shortFile = await inProcess(["review", "list", "--url", url, "--token-file", join(dir, "short")]);
      expect(shortFile.code).toBe(2);
      expect(shortFile.stderr).toMatch(/the token in --token-file .*short is 4 characters long/);
      const missing = await inProcess(["list", "--url", url, "--token-file", join(dir, "nope")]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/--token-file .*nope cannot be read/);
      expect(seen).toHaveLength(1);
    } finally {
      api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("claims report", () => {
  it("refuses a simulation id that would write outside runs/ with exit 2, and writes nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "claims-report-path-"));
    try {
      const out = await inProcess(["report", "--simulation-id", ".."], join(dir, "data"));
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(/simulation id "\.\." cannot name a run/);
      expect(existsSync(join(dir, "data", "report.html"))).toBe(false);
      expect(existsSync(join(dir, "report.html"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("claims serve refuses a bad setting with exit 2, before starting anything", () => {
  it.each<{ name: string; env: Record<string, string>; error: RegExp }>([
    {
      name: "an intake token shorter than 16 characters",
      env: { CLAIMS_API_TOKEN: "short" },
      error: /CLAIMS_API_TOKEN is 5 characters long; .* at least 16/,
    },
    {
      name: "a reviewer token shorter than 16 characters (blanks trimmed)",
      env: { CLAIMS_API_TOKEN: "a-long-enough-intake-token", CLAIMS_REVIEWER_TOKEN: "  fifteen-chars  " },
      error: /CLAIMS_REVIEWER_TOKEN is 13 characters long/,
    },
    {
      name: "an unknown PAYMENT_PROVIDER",
      env: { PAYMENT_PROVIDER: "paypal" },
      error: /PAYMENT_PROVIDER must be one of simulated, stripe, got "paypal"/,
    },
    {
      name: "stripe without STRIPE_API_KEY",
      env: { PAYMENT_PROVIDER: "stripe", STRIPE_API_KEY: "" },
      error: /PAYMENT_PROVIDER=stripe needs STRIPE_API_KEY/,
    },
    {
      name: "a CLAIMS_STEP_TIMERS that is neither lazy nor eager",
      env: { CLAIMS_STEP_TIMERS: "sometimes" },
      error: /CLAIMS_STEP_TIMERS must be lazy or eager .*got 'sometimes'/,
    },
  ])(
    "$name",
    async ({ env, error }) => {
      const dir = mkdtempSync(join(tmpdir(), "claims-bad-setting-"));
      try {
        const run = await inProcess(["serve", "--port", "0"], dir, env);
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(error);
        expect(existsSync(join(dir, "store"))).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});

describe("an empty variable counts as unset", () => {
  it("CLAIMS_DATA_DIR empty is .claims in the working directory, CLAIMS_URL empty is no URL", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "claims-empty-env-"));
    const inCwd = async (args: string[], env: Record<string, string>) => {
      try {
        const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
          cwd,
          env: { ...process.env, NO_COLOR: "1", ...env },
        });
        return { code: 0, stdout, stderr };
      } catch (e) {
        const err = e as { code: number; stdout: string; stderr: string };
        return { code: err.code, stdout: err.stdout, stderr: err.stderr };
      }
    };
    try {
      const report = await inCwd(["report"], { CLAIMS_DATA_DIR: "" });
      expect(report.code).toBe(2);
      expect(report.stderr).toContain(`no claims serve store in ${join(cwd, ".claims")}`);
      const list = await inCwd(["list"], { CLAIMS_URL: "", CLAIMS_API_TOKEN: "an-intake-token-long-enough" });
      expect(list.stderr).not.toMatch(/--url must be an http\(s\) URL/);
      expect(list.stderr).toMatch(/127\.0\.0\.1:3000|^$/);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("claims --version and --help", () => {
  it("prints the package version and exits 0, and every command has --help", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    const version = await claims(["--version"]);
    expect(version).toMatchObject({ code: 0 });
    expect(version.stdout.trim()).toBe(pkg.version);
    for (const command of ["batch", "serve", "list", "report", "replay", "review", "config", "load-orders"]) {
      const help = await claims([command, "--help"]);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(/^Usage: claims /);
    }
  }, 300_000);
});
