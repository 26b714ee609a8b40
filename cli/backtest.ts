// `claims backtest --policy FILE`: re-decides every recorded claim the kernel decided under a candidate
// policy (a config file in the --config format: its agent's contract and claims bounds; its orders are
// ignored) and prints what would change. Read-only: it never calls a model or the order API and never
// writes to the store; it works while `claims serve` is stopped (or through it while it runs).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { BacktestReport, RecordedHistory } from "../core/history/backtest/index.ts";
import { agentHandshake, parseConfig } from "../core/claim/config.ts";
import { BacktestCliError } from "./errors.ts";
import { parseIsoMs } from "../core/integrity/time.ts";
import { AgentRefusedError } from "../functions/composition/errors.ts";
import { dataDirFrom } from "./run-store.ts";

function parseInstant(flag: string) {
  return (value: string): number => {
    const ms = parseIsoMs(value);
    if (ms === undefined)
      throw new InvalidArgumentError(
        `${flag} must be an ISO timestamp such as 2026-06-01T12:00:00Z (UTC unless it has an offset), got '${value}'`,
      );
    return ms;
  };
}

type BacktestOptions = {
  policy: string;
  since?: number;
  until?: number;
  simulationId?: string;
  dataDir?: string;
  table?: string;
  region?: string;
  endpoint?: string;
  json?: boolean;
  out?: string;
};

/** Reads the candidate policy as `claims config check` reads a config: a mistake is refused with its line (exit 2). */
function readPolicy(file: string) {
  let text: string;
  try {
    text = readFileSync(resolve(file), "utf8");
  } catch {
    throw new BacktestCliError(`policy file not found: ${file}`);
  }
  // Relative purchase dates resolve against now; the policy's orders are ignored anyway.
  const config = parseConfig(text, file, Date.now());
  const handshake = agentHandshake(config);
  if (!handshake.ok)
    throw new AgentRefusedError(
      `agent ${config.agent.agentId} v${config.agent.version} was refused by the registry: ${handshake.message}`,
    );
  return config.agent;
}

/** The histories of a deployed table, read through the DynamoDB adapters (queries only). */
async function tableHistories(o: BacktestOptions): Promise<{ histories: RecordedHistory[]; source: string }> {
  const { DynamoDBDocumentClient } = await import("@aws-sdk/lib-dynamodb");
  const { createDynamoPorts } = await import("../adapters/aws/index.ts");
  const { storedHistories } = await import("./backtest-source.ts");
  const { tableClient } = await import("./table-client.ts");
  const client = tableClient(o);
  try {
    const ports = createDynamoPorts({ client: DynamoDBDocumentClient.from(client), tableName: o.table! });
    return { histories: await storedHistories({ ports }, o.simulationId), source: `table ${o.table}` };
  } catch (e) {
    const names = [(e as { name?: string }).name, (e as { cause?: { name?: string } }).cause?.name];
    if (names.includes("ResourceNotFoundException"))
      throw new BacktestCliError(
        `table ${o.table} not found: use the Table name printed by sst deploy, and the right --region`,
      );
    if (names.includes("CredentialsProviderError"))
      throw new BacktestCliError("no AWS credentials found: configure them (aws configure, AWS_PROFILE)");
    throw new BacktestCliError(`could not read table ${o.table}: ${(e as Error).message}`);
  } finally {
    client.destroy();
  }
}

async function histories(o: BacktestOptions): Promise<{ histories: RecordedHistory[]; source: string }> {
  if (o.table) {
    const found = await tableHistories(o);
    if (found.histories.length === 0)
      throw new BacktestCliError(
        `no recorded claims in table ${o.table}${o.simulationId ? ` for simulation ${o.simulationId}` : ""}`,
      );
    return found;
  }
  const dataDir = dataDirFrom(o.dataDir);
  const { dataDirHistories } = await import("./backtest-source.ts");
  const found = await dataDirHistories(dataDir, o.simulationId);
  if (found.found) return found;
  const demos = [...found.runs, ...found.simulations];
  throw new BacktestCliError(
    o.simulationId
      ? `no recorded run '${o.simulationId}' and no served claims of it in ${dataDir} (runs: ${found.runs.join(", ") || "none"})`
      : demos.length > 0
        ? `no served claims in ${dataDir}: a backtest reads the served traffic by default; its demo runs are read only when named: --simulation-id ${demos.at(-1)} (runs and simulations: ${demos.join(", ")})`
        : `no served claims and no recorded runs in ${dataDir}: run 'claims serve' (or 'claims batch', then --simulation-id) first`,
  );
}

async function writeHtml(report: BacktestReport, out: string, title: string): Promise<string> {
  const { renderBacktestReport } = await import("../report/backtest.ts");
  const path = resolve(out);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, renderBacktestReport(report, { title }), "utf8");
  } catch (cause) {
    throw new BacktestCliError(`could not write the report to ${path}: ${(cause as Error).message}`);
  }
  return path;
}

/** Registers `claims backtest`. */
export function registerBacktestCommand(program: Command): void {
  program
    .command("backtest")
    .description(
      "re-decide the served claims (or, with --simulation-id, a demo run) under a candidate policy and show what would change (flips, refunds, reviews); read-only, no model calls",
    )
    .requiredOption(
      "--policy <file>",
      "the candidate policy: a config file in the --config format (its orders are ignored)",
    )
    .option("--since <iso>", "re-decide only decisions taken at or after this instant", parseInstant("--since"))
    .option("--until <iso>", "leave out decisions taken after this instant", parseInstant("--until"))
    .option(
      "--simulation-id <id>",
      "a demo run instead of the served traffic: this recorded batch run (or the served claims of this simulation)",
    )
    .option("--data-dir <path>", "where runs and the served store are kept (default $CLAIMS_DATA_DIR or .claims)")
    .option("--table <name>", "read a deployed DynamoDB table instead (read-only; uses your AWS credentials)")
    .option("--region <region>", "with --table: the AWS region (default: your AWS configuration)")
    .option("--endpoint <url>", "with --table: a DynamoDB endpoint (e.g. a local emulator)")
    .option("--json", "print the result as JSON on stdout (progress goes to stderr)")
    .option("--out <path>", "also write the HTML backtest report there")
    .action(async (o: BacktestOptions) => {
      if (o.table && o.dataDir) throw new BacktestCliError("give --data-dir or --table, not both");
      if (!o.table && (o.region || o.endpoint)) throw new BacktestCliError("--region and --endpoint go with --table");
      if (o.since !== undefined && o.until !== undefined && o.since > o.until)
        throw new BacktestCliError("--since is after --until: nothing to re-decide");
      const policy = readPolicy(o.policy);
      // Loaded when the command runs, so every other command starts as fast as before.
      const [{ backtest }, { nodeSha256 }, { formatBacktest }] = await Promise.all([
        import("../core/history/backtest/index.ts"),
        import("../functions/composition/compose.ts"),
        import("./backtest-output.ts"),
      ]);
      const found = await histories(o);
      const total = found.histories.reduce((n, h) => n + h.events.length, 0);
      if (total > 50_000) process.stderr.write(`backtest: ${total} recorded events read from ${found.source}\n`);
      const started = performance.now();
      const report = backtest({
        histories: found.histories,
        policy,
        sha256: nodeSha256,
        ...(o.since === undefined ? {} : { sinceMs: o.since }),
        ...(o.until === undefined ? {} : { untilMs: o.until }),
        onProgress: (n) =>
          process.stderr.write(
            `backtest: ${n} claims re-decided (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
          ),
      });
      const html = o.out ? await writeHtml(report, o.out, `Claims Crew — backtest of ${o.policy}`) : undefined;
      if (o.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      else {
        process.stdout.write(formatBacktest(report, { policyFile: o.policy, source: found.source }));
        if (html) process.stdout.write(`Report: ${html}\n`);
      }
      const ignored = report.policy.ignored_shadow_policy;
      if (o.json && ignored)
        process.stderr.write(
          `backtest: the policy file's shadow_policy (agent ${ignored.agent_id}) is ${ignored.note}\n`,
        );
      if (o.json && html) process.stderr.write(`backtest: report written to ${html}\n`);
    });
}
