// The `claims` CLI (docs/cli.md): batch, serve, list, report, replay.
import { registerReconcileCommand } from "./reconcile.ts";
import { registerAwsCommands } from "./aws-commands.ts";
import { ClaimsError } from "../core/errors.ts";
import { AgentRefusedError } from "../functions/composition/errors.ts";
import { paymentProviderNameFrom } from "../functions/composition/payments.ts";
import { missingExecutorSecrets } from "../app/payment-provider.ts";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { describePreflight, PREFLIGHT_RECHECK_MS } from "../adapters/llm/index.ts";
import { llmOutageHoldMsFromEnv } from "../pipeline/deps.ts";
import { localLlm } from "../local/serve-llm.ts";
import { parseConfig } from "../core/claim/config.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import { SourceFileError } from "../core/claim/errors.ts";
import { auditClaimId } from "../core/history/audit-events.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import type { ReplayResult } from "../core/history/replay/index.ts";
import { frozenClock, systemClock } from "../core/crew/index.ts";
import { assertAgentAccepted, runBatch, summarize } from "./batch.ts";
import { jsonRow } from "./batch-output.ts";
import { interruptOnSignals, stopOnSignals } from "./serve-signals.ts";
import { busProgress, destinationLines } from "./serve-console.ts";
import type { BatchLlm } from "./batch.ts";
import { checkFile, checkJson, formatCheck, ignoredSummary } from "./config-check.ts";
import type { CheckKind } from "./config-check.ts";
import { parseIsoMs } from "../core/integrity/time.ts";
import { dataDirFrom, findClaimRun, latestRun, loadRunAudit, listRuns, runDir } from "./run-store.ts";
import { healthAnswer, startHttpFront } from "../local/http-front.ts";
import { ORDER_API_RECHECK_MS, orderApiMonitorFromEnv } from "../local/order-api-monitor.ts";
import { registerReviewCommands } from "./review.ts";
import { registerReviewersCommands, reviewerSetup } from "./reviewers.ts";
import { registerListCommand } from "./list.ts";
import { serverToken } from "./tokens.ts";
import { ensureOwnerOnlyDir } from "../local/owner-only.ts";
import { registerBacktestCommand } from "./backtest.ts";
import { servedClaimsAudit, stateDirOf, withStateStore } from "./served-store.ts";
import { dfidOf } from "../core/kernel/claim-record.ts";
import { ROUTES, servedRouteKeys } from "../app/manifest.ts";
import type { RouteFact } from "../app/manifest.ts";
import { createInProcessRuntime } from "../local/runtime.ts";
import { startLocalStack } from "../local/stack.ts";
import { CliError } from "./errors.ts";
import { loadPriceTable } from "../adapters/llm/prices-file.ts";
import type { PriceTable } from "../core/llm/prices.ts";
import { formatModelCost, modelCost } from "../core/agents/model-cost.ts";

const DEFAULT_SCENARIOS = "scenarios/scenarios.yaml";
const DEFAULT_CONFIG = "scenarios/config.yaml";

function parseNow(value: string): number {
  // Without an offset the instant is UTC, as everywhere else: a run never depends on the machine's time zone.
  const ms = parseIsoMs(value);
  if (ms === undefined)
    throw new InvalidArgumentError(
      `--now must be an ISO timestamp such as 2026-06-01T12:00:00Z (UTC unless it has an offset), got '${value}'`,
    );
  return ms;
}

function parseKind(value: string): CheckKind {
  if (value !== "config" && value !== "scenarios")
    throw new InvalidArgumentError(`--kind must be config or scenarios, got '${value}'`);
  return value;
}

function mustExist(path: string, what: string): string {
  const full = resolve(path);
  if (!existsSync(full)) throw new CliError(`${what} not found: ${path}`);
  return full;
}

function parseMaxOpen(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 1_000_000)
    throw new InvalidArgumentError(`--max-open must be a number of claims (0 = no bound), got '${value}'`);
  return n;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535)
    throw new InvalidArgumentError(`--port must be a number from 0 to 65535 (0 = any free port), got '${value}'`);
  return port;
}

/** The LLM of a local run (local/serve-llm.ts): the environment over the config file's defaults. */
const llmFor = (config: ClaimsConfig): BatchLlm => localLlm(config);

/** CLAIMS_MEMORY_REPORT_S of `claims serve`: seconds between memory reports (default 0: none); a bad value is a usage error (exit 2). */
function memoryReportSeconds(): number {
  const raw = process.env.CLAIMS_MEMORY_REPORT_S?.trim();
  if (!raw) return 0;
  if (!/^\d+$/.test(raw) || Number(raw) > 86_400)
    throw new CliError(
      `CLAIMS_MEMORY_REPORT_S must be a whole number of seconds from 0 to 86400, got ${JSON.stringify(raw)}`,
    );
  return Number(raw);
}

/** CLAIMS_LLM_OUTAGE_HOLD_S of `claims serve` (default one hour); a bad value is a usage error (exit 2). */
function outageHoldFromEnv(): number {
  try {
    return llmOutageHoldMsFromEnv(process.env);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

function parseSeconds(value: string): number {
  const s = Number(value);
  if (!/^\d+$/.test(value) || s < 1 || s > 86_400)
    throw new InvalidArgumentError(`--claim-timeout must be a whole number of seconds from 1 to 86400, got '${value}'`);
  return s;
}

/** Handler logs of a local run: errors only (the console tells the story), unless CLAIMS_LOG_LEVEL asks for more. */
const quietHandlers = (): { logLevel?: "ERROR" } => (process.env.CLAIMS_LOG_LEVEL ? {} : { logLevel: "ERROR" });

async function writeReportFor(
  dataDir: string,
  simulationId: string,
  out?: string,
  prices: PriceTable = loadPriceTable(),
): Promise<string> {
  const { writeReport } = await import("./report-file.ts");
  const events = loadRunAudit(dataDir, simulationId);
  return writeReport(events, out ?? resolve(runDir(dataDir, simulationId), "report.html"), { prices });
}

/** The package's version, as `claims --version` prints it. */
const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string })
  .version;

const program = new Command()
  .name("claims")
  .description("Claims Crew: an LLM crew proposes refunds, a deterministic kernel decides.")
  .version(VERSION, "-V, --version", "print the version")
  .showHelpAfterError("(run claims --help for usage)")
  .exitOverride();

program
  .command("batch")
  .description("run the scenarios through the full pipeline and compare every verdict with the expected one")
  .argument("[scenarios]", "scenario file", DEFAULT_SCENARIOS)
  .option("--config <path>", "configuration file", DEFAULT_CONFIG)
  .option(
    "--now <iso>",
    "the instant the whole run is decided at (ISO timestamp; default: when the run starts)",
    parseNow,
  )
  .option("--json", "print one JSON array of verdicts on stdout (logs go to stderr)")
  .option("--data-dir <path>", "where runs, audit and reports are kept (default $CLAIMS_DATA_DIR or .claims)")
  .option("--in-process", "run the pipeline in this process over in-memory ports instead of the local stack")
  .option(
    "--claim-timeout <seconds>",
    "how long to wait for one claim before it goes to NEEDS_REVIEW (default: derived from LLM_TIMEOUT_MS)",
    parseSeconds,
  )
  .option(
    "--keep-going",
    "when the model's endpoint check fails, run every row anyway (they end NEEDS_REVIEW LLM_UNREACHABLE) instead of stopping",
  )
  .action(
    async (
      scenarios: string,
      o: {
        config: string;
        now?: number;
        json?: boolean;
        dataDir?: string;
        inProcess?: boolean;
        claimTimeout?: number;
        keepGoing?: boolean;
      },
    ) => {
      const log = (text: string) => (o.json ? process.stderr : process.stdout).write(`${text}\n`);
      // A batch is decided as of one instant: every claim is received when the run starts (or at --now),
      // so relative order dates and boundaries such as "exactly 14 days" mean what they say.
      const clock = frozenClock(o.now ?? systemClock().now());
      const dataDir = dataDirFrom(o.dataDir);
      ensureOwnerOnlyDir(dataDir);
      // A price table that cannot be used stops the run before anything starts (exit 2).
      const prices = loadPriceTable();
      const t0 = performance.now();
      // Ctrl-C (or SIGTERM): the run ends with its partial audit and report, exit 130; a second one exits at once.
      const interrupt = interruptOnSignals(log);
      const outcome = await runBatch({
        signal: interrupt.signal,
        scenariosPath: mustExist(scenarios, "scenario file"),
        configPath: mustExist(o.config, "config file"),
        clock,
        dataDir,
        log,
        ...(o.keepGoing ? { keepGoing: true } : {}),
        llm: llmFor,
        // The local stack by default: the production handlers on dynalite, fauxqs and the local bus.
        runtime: async (opts) =>
          o.inProcess
            ? createInProcessRuntime(opts)
            : (
                await startLocalStack({
                  configPath: resolve(o.config),
                  clock,
                  llm: opts.llm,
                  orders: opts.orders,
                  dataDir,
                  sweepEveryMs: 0,
                  ...quietHandlers(),
                  ...(opts.waits ? { waits: opts.waits } : {}),
                  ...(o.claimTimeout === undefined ? {} : { settleTimeoutMs: o.claimTimeout * 1000 }),
                })
              ).runtime,
        writeReport: (simulationId) => writeReportFor(dataDir, simulationId, undefined, prices),
      });
      log(summarize(outcome, performance.now() - t0));
      log(`  ${formatModelCost(modelCost(loadRunAudit(dataDir, outcome.simulationId), prices))}\n`);
      if (o.json) {
        const rows = outcome.rows.map(jsonRow);
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      }
      interrupt.dispose();
      process.exitCode = outcome.interrupted ? 130 : outcome.allMatch && outcome.llmReady ? 0 : 1;
    },
  );

program
  .command("serve")
  .description(
    "start the local stack and the HTTP API (claims, reviews, reports, health) until interrupted; tokens from CLAIMS_API_TOKEN and CLAIMS_REVIEWER_TOKEN, or generated and printed",
  )
  .option("--port <port>", "port to listen on (0 = any free port)", parsePort, 3000)
  .option("--host <host>", "address to listen on (anything but loopback exposes the API to the network)", "127.0.0.1")
  .option("--config <path>", "configuration file", DEFAULT_CONFIG)
  .option(
    "--data-dir <path>",
    "where the claims, ledger, reviews and audit (store/) and events.jsonl are kept across restarts (default $CLAIMS_DATA_DIR or .claims)",
  )
  .option(
    "--max-open <n>",
    "answer 429 with Retry-After while this many claims are open (default $CLAIMS_MAX_OPEN or 200; 0 = no bound)",
    parseMaxOpen,
  )
  .option("--now <iso>", "freeze the clock (ISO timestamp); step timeouts never come due on a frozen clock", parseNow)
  .option(
    "--reviewers <file>",
    "the reviewers file: one token per named reviewer (default $CLAIMS_REVIEWERS_FILE; without one, CLAIMS_REVIEWER_TOKEN is the one reviewer `reviewer`)",
  )
  .action(
    async (o: {
      port: number;
      host: string;
      config: string;
      dataDir?: string;
      maxOpen?: number;
      now?: number;
      reviewers?: string;
    }) => {
      const out = (text: string) => process.stdout.write(`${text}\n`);
      // SIGINT or SIGTERM to this process (Ctrl-C, systemd, pm2): listened for from the start, so one that comes
      // while the stack starts stops it as soon as it is up.
      const stopSignal = stopOnSignals();
      const t0 = performance.now();
      const configPath = mustExist(o.config, "config file");
      const dataDir = dataDirFrom(o.dataDir);
      const fromEnv = serverToken("CLAIMS_API_TOKEN");
      const apiToken = fromEnv ?? randomBytes(24).toString("base64url");
      const reviewerFromEnv = serverToken("CLAIMS_REVIEWER_TOKEN");
      const reviewerToken = reviewerFromEnv ?? randomBytes(24).toString("base64url");
      const reviewing = reviewerSetup(o.reviewers, apiToken);
      // The payment settings, checked before anything starts (the refund executor reads them on its first refund):
      // a known provider, and the secrets its executor pays with (app/payment-providers/; Stripe: STRIPE_API_KEY).
      const provider = paymentProviderNameFrom(process.env);
      for (const secret of missingExecutorSecrets(provider, process.env))
        throw new CliError(`PAYMENT_PROVIDER=${provider} needs ${secret.env} (${secret.description})`);
      const clock = o.now === undefined ? systemClock() : frozenClock(o.now);
      const config = parseConfig(readFileSync(configPath, "utf8"), o.config, clock.now());
      assertAgentAccepted(config);
      // A server that stays up keeps no records of the model calls it made (the meter counts for a batch).
      const llm = localLlm(config, process.env, 0);
      const outageHoldMs = outageHoldFromEnv();
      const reportEvery = memoryReportSeconds();
      const check = llm.preflight ? await llm.preflight() : undefined;
      // ORDER_SOURCE=http: the order API checked now and every ORDER_API_RECHECK_MS (GET /health says so while it fails).
      const orders = await orderApiMonitorFromEnv(process.env);
      if (reviewerToken === apiToken)
        throw new CliError(
          "CLAIMS_REVIEWER_TOKEN must differ from CLAIMS_API_TOKEN: reviewers and intake use separate credentials",
        );
      const maxOpen =
        o.maxOpen ?? (process.env.CLAIMS_MAX_OPEN?.trim() ? parseMaxOpen(process.env.CLAIMS_MAX_OPEN.trim()) : 200);
      const stateDir = stateDirOf(dataDir);
      const stack = await startLocalStack({
        configPath,
        clock,
        llm: llm.port,
        dataDir,
        stateDir,
        apiToken,
        reviewerToken,
        ...reviewing.stack,
        onBusEvent: busProgress(out),
        recordBusEvents: false,
        // The handlers' warnings as lines of text between the others (CLAIMS_LOG_FORMAT=json: Powertools' JSON).
        logFormat: process.env.CLAIMS_LOG_FORMAT?.trim().toLowerCase() === "json" ? "json" : "text",
        ...(maxOpen > 0 ? { maxOpenClaims: maxOpen } : {}),
        ...(llm.waits ? { waits: llm.waits } : {}),
        llmOutageHoldMs: outageHoldMs,
        // CLAIMS_HANDLER_THREAD=1: the consumers in a thread of their own, off the HTTP front's (docs/local-stack.md).
        handlerThread: process.env.CLAIMS_HANDLER_THREAD?.trim() === "1",
      });
      const front = await startHttpFront({
        functions: {
          intakeApi: stack.handlers.intakeApi,
          reviewApi: stack.handlers.reviewApi,
          ...(stack.handlers.paymentWebhook ? { paymentWebhook: stack.handlers.paymentWebhook } : {}),
        },
        authorizers: { intake: stack.handlers.authorizer, reviewer: stack.handlers.reviewerAuthorizer },
        port: o.port,
        host: o.host,
        health: () =>
          healthAnswer({
            llm: Boolean(llm.unreachable?.() || stack.handlerThread?.llmUnreachable()),
            orders: orders?.unreachable() ?? false,
          }),
        onRequest: (r) => out(`  [http] ${r.method.padEnd(4)} ${r.path} ${r.status} ${r.ms.toFixed(0)} ms`),
      }).catch(async (e: unknown) => {
        await stack.stop();
        throw new CliError((e as Error).message);
      });
      stack.stateLock?.update({ url: front.url });
      out(`Claims Crew local stack: ${stack.runtime.description}`);
      out(`  listening on ${front.url}`);
      out(`  pid      ${process.pid}: SIGINT or SIGTERM to this process stops the server cleanly (exit 0)`);
      if (!LOOPBACK.test(o.host)) {
        process.stderr.write(
          `\n  WARNING: --host ${o.host} makes the HTTP API reachable from other machines (bearer tokens travel in clear HTTP).\n  The emulators behind it stay on 127.0.0.1. Use --host 127.0.0.1 unless you mean it.\n\n`,
        );
        out(`  WARNING  listening on ${o.host}, not loopback: the API is reachable from the network`);
      }
      out(
        `  routes   ${servedRouteKeys(stack.payments.webhook ? stack.payments.provider : undefined)
          // A provider's webhook answers only with its signing secret (STRIPE_WEBHOOK_SECRET); without one it is 404.
          .map((key): [string, RouteFact] => [key, ROUTES[key]])
          .map(([key, r]) => `${key}${r.auth === "none" ? " (open)" : r.auth === "reviewer" ? " (reviewer)" : ""}`)
          .join(" · ")}`,
      );
      out(
        fromEnv
          ? "  token    from CLAIMS_API_TOKEN"
          : `  token    generated for this run: ${apiToken}  (set CLAIMS_API_TOKEN to choose one)`,
      );
      out(
        reviewing.describe ??
          (reviewerFromEnv
            ? "  reviewer from CLAIMS_REVIEWER_TOKEN (reviewer id `reviewer`)"
            : `  reviewer token generated for this run: ${reviewerToken}  (set CLAIMS_REVIEWER_TOKEN to choose one, or name your reviewers: claims reviewers add)`),
      );
      out(`  events   ${stack.bus.local.journalPath ?? "(not journaled)"}`);
      out(
        `  state    ${stateDir}: claims, idempotency keys, ledger, reviews, audit and queued messages survive a restart (kill -9 too)`,
      );
      if (stack.recovered.messages + stack.recovered.restarted + stack.recovered.ticked + stack.recovered.refunds > 0) {
        out(
          `  recovered ${stack.recovered.messages} queued message(s); re-drove ${stack.recovered.restarted + stack.recovered.ticked} open claim(s)${stack.recovered.refunds > 0 ? `; delivering ${stack.recovered.refunds} refund(s) to the executor again` : ""}`,
        );
      }
      out(
        `  bound    ${maxOpen > 0 ? `intake answers 429 (Retry-After) while ${maxOpen} claims are open (--max-open)` : "none: intake never answers 429 (--max-open 0)"}`,
      );
      out(
        `  agent    ${config.agent.agentId} v${config.agent.version}; ${config.orders.length} orders seeded; ${llm.description}`,
      );
      for (const line of destinationLines(process.env, {
        orders: config.orders.length,
        llm: llm.description,
        provider,
      }))
        out(line);
      if (check !== undefined) {
        out(`  llm      ${describePreflight(check)}`);
        if (!check.ok)
          out(
            outageHoldMs > 0 && check.code === "LLM_UNREACHABLE"
              ? `           serving degraded (GET /health says so): claims that need the model wait for it up to ${outageHoldMs / 1000} s (CLAIMS_LLM_OUTAGE_HOLD_S), then end NEEDS_REVIEW (${check.code}); it is checked again every ${PREFLIGHT_RECHECK_MS / 1000} s`
              : `           serving degraded (GET /health says so): claims that need the model end NEEDS_REVIEW (${check.code}) until it answers; it is checked again every ${PREFLIGHT_RECHECK_MS / 1000} s`,
          );
      }
      if (orders !== undefined) {
        out(`  orders   the shop's order API at ${orders.url}${orders.first.ok ? " answers" : ""}`);
        if (!orders.first.ok)
          out(
            `           serving degraded (GET /health says so): ${orders.first.problem}; claims wait for it up to ORDER_SOURCE_MAX_WAIT_S, then go to a person; it is checked again every ${ORDER_API_RECHECK_MS / 1000} s`,
          );
      }
      for (const m of config.reading.mappings) out(`  read as  ${m}`);
      if (config.reading.ignored.length > 0) out(`  ignored  ${ignoredSummary(config.reading.ignored)}`);
      out(
        `  try      curl -s -X POST ${front.url}/claims -H "Authorization: Bearer $CLAIMS_API_TOKEN" -H 'content-type: application/json' -d '{"claim_text":"I bought order ord_001 for 299.99 EUR, the screen is dead"}'`,
      );
      out(`Ready in ${(performance.now() - t0).toFixed(0)} ms. Ctrl-C stops.`);
      // CLAIMS_MEMORY_REPORT_S=n: a line `[memory] {json}` every n seconds (RSS, each thread's heap; docs/local-stack.md).
      const reporter =
        reportEvery > 0
          ? setInterval(() => {
              void stack.memory().then(
                (m) => out(`  [memory] ${JSON.stringify(m)}`),
                () => undefined,
              );
            }, reportEvery * 1000)
          : undefined;
      reporter?.unref();
      const signal = await stopSignal;
      if (reporter) clearInterval(reporter);
      out(`${signal}: stopping the HTTP API, the pollers, the bus and the emulators…`);
      orders?.stop();
      await front.stop();
      await stack.stop();
      out("Stopped.");
      process.exitCode = 0;
    },
  );

const configCommand = program.command("config").description("configuration and scenario files");
configCommand
  .command("check")
  .description(
    "read a configuration or scenario file as batch and serve do, and say what was understood (exit 2 with the errors when it is invalid)",
  )
  .argument("<file>", "a config.yaml or scenarios.yaml (ours or DIR sample 35's)")
  .option("--kind <kind>", "config or scenarios (default: told from the content)", parseKind)
  .option("--now <iso>", "the instant relative purchase dates (-3d) resolve against (default: now)", parseNow)
  .option("--json", "print what was understood as JSON")
  .action((file: string, o: { kind?: CheckKind; now?: number; json?: boolean }) => {
    const path = mustExist(file, "file");
    const checked = checkFile(readFileSync(path, "utf8"), file, o.now ?? systemClock().now(), o.kind);
    process.stdout.write(o.json ? `${JSON.stringify(checkJson(checked), null, 2)}\n` : formatCheck(checked));
    if (checked.kind === "config" && !checked.handshake.ok) {
      throw new AgentRefusedError(
        `agent ${checked.config.agent.agentId} v${checked.config.agent.version} was refused by the registry: ${checked.handshake.message}`,
      );
    }
  });

program
  .command("load-orders")
  .description(
    "write the orders of a file you name into a deployed table (the kernel's context store); uses your AWS credentials",
  )
  .requiredOption("--table <name>", "the DynamoDB table (the `table` output of sst deploy)")
  // No default: the bundled scenarios/config.yaml holds the demo's orders, which must never land in a real table by accident.
  .requiredOption(
    "--config <path>",
    "the file whose context_store.orders to load (config format; for the demo's orders: scenarios/config.yaml)",
  )
  .option("--region <region>", "AWS region (default: your AWS configuration)")
  .option("--endpoint <url>", "a DynamoDB endpoint (e.g. a local emulator)")
  .action(async (o: { table: string; config: string; region?: string; endpoint?: string }) => {
    const configPath = mustExist(o.config, "config file");
    const config = parseConfig(readFileSync(configPath, "utf8"), o.config, systemClock().now());
    const { DynamoDBDocumentClient } = await import("@aws-sdk/lib-dynamodb");
    const { seedOrders } = await import("../adapters/aws/index.ts");
    const { tableClient } = await import("./table-client.ts");
    const client = tableClient(o);
    try {
      await seedOrders(DynamoDBDocumentClient.from(client), o.table, config.orders);
    } catch (e) {
      const name = (e as { name?: string }).name ?? "";
      const cause = (e as { cause?: { name?: string } }).cause?.name ?? "";
      if ([name, cause].includes("ResourceNotFoundException"))
        throw new CliError(
          `table ${o.table} not found${o.endpoint ? ` at ${o.endpoint}` : ""}: use the Table name printed by sst deploy, and the right --region`,
        );
      if ([name, cause].includes("CredentialsProviderError"))
        throw new CliError(
          "no AWS credentials found: configure them (aws configure, AWS_PROFILE) or pass --endpoint for a local table",
        );
      throw new CliError(`could not load the orders into ${o.table}: ${(e as Error).message}`);
    } finally {
      client.destroy();
    }
    process.stdout.write(
      `Loaded ${config.orders.length} orders from ${o.config} into ${o.table} (relative purchase dates resolved against now).\n`,
    );
  });

program
  .command("report")
  .description("regenerate the HTML audit report of a recorded run, or of the claims sent to claims serve")
  .option("--simulation-id <id>", "the run or the served simulation (default: the latest run)")
  .option("--served", "the claims sent to claims serve without a simulation_id")
  .option(
    "--out <path>",
    "where to write the report (default: the run's folder; served claims: <data-dir>/served/report.html)",
  )
  .option("--data-dir <path>", "where runs and the served store are kept (default $CLAIMS_DATA_DIR or .claims)")
  .action(async (o: { simulationId?: string; served?: boolean; out?: string; dataDir?: string }) => {
    const dataDir = dataDirFrom(o.dataDir);
    const out = o.out ? resolve(o.out) : undefined;
    if (o.served && o.simulationId) throw new CliError("give --served or --simulation-id, not both");
    const simulationId = o.served ? undefined : (o.simulationId ?? latestRun(dataDir));
    if (simulationId && existsSync(join(runDir(dataDir, simulationId), "audit.jsonl"))) {
      const path = await writeReportFor(dataDir, simulationId, out);
      process.stdout.write(`Report for ${simulationId}: ${path}\n`);
      return;
    }
    // Not a batch run: the served claims, from the store claims serve keeps (through it while it runs), as the served view.
    const { writeReport } = await import("./report-file.ts");
    const { renderAuditReport } = await import("../report/served.ts");
    const written = await withStateStore(dataDir, async (store) => {
      const events = simulationId ? await store.ports.audit.bySimulation(simulationId) : await servedClaimsAudit(store);
      if (events.length === 0)
        throw new CliError(
          simulationId
            ? `no run or served claims of simulation ${simulationId} in ${dataDir}`
            : `no served claims in ${dataDir} yet`,
        );
      const title = simulationId ? `Claims Crew — ${simulationId} (served)` : "Claims Crew — served claims";
      const path =
        out ??
        (simulationId ? resolve(runDir(dataDir, simulationId), "report.html") : join(dataDir, "served", "report.html"));
      return {
        path: writeReport(
          events,
          path,
          {
            title,
            scope: simulationId
              ? `the claims served under ${simulationId}`
              : "every claim served without a simulation_id",
          },
          renderAuditReport,
        ),
        source: store.source,
      };
    });
    if (!written) {
      throw new CliError(
        simulationId
          ? `no recorded run '${simulationId}' and no claims serve store in ${dataDir} (runs: ${listRuns(dataDir).join(", ") || "none"})`
          : `no recorded runs and no claims serve store in ${dataDir}: run 'claims batch' or 'claims serve' first`,
      );
    }
    process.stdout.write(`Report for ${simulationId ?? "served claims"} (from ${written.source}): ${written.path}\n`);
  });

program
  .command("replay")
  .description(
    "re-run a recorded decision from its audit events (no model calls) and check it reproduces byte for byte; exit 0 IDENTICAL, 1 DIFFERENT, 3 INCOMPLETE",
  )
  .argument("<claim-id>", "the claim to replay")
  .option("--data-dir <path>", "where runs are kept (default $CLAIMS_DATA_DIR or .claims)")
  .option("--json", "print the replay result as JSON")
  .action(async (claimId: string, o: { dataDir?: string; json?: boolean }) => {
    const dataDir = dataDirFrom(o.dataDir);
    // A batch run's file, else the store of claims serve (a served claim's own events).
    const found =
      findClaimRun(dataDir, claimId) ??
      (await withStateStore(dataDir, async (store) => {
        const events = await store.ports.audit.byDfid(dfidOf(claimId));
        if (!events.some((e) => auditClaimId(e) === claimId)) return undefined;
        // The stored claim record, so replay checks the audit's parent claim (a RESUBMIT's) against it.
        const record = await store.ports.claims.getClaim(claimId);
        const claimRecord = record ? { parent_claim_id: record.parent_claim_id } : undefined;
        return { simulationId: `served, from ${store.source}`, events, claimRecord };
      }));
    if (!found)
      throw new CliError(
        `claim ${claimId} is not in any recorded run nor among the served claims in ${dataDir} (runs: ${listRuns(dataDir).join(", ") || "none"})`,
      );
    const result = replayClaim(
      claimId,
      found.events,
      "claimRecord" in found && found.claimRecord ? { claimRecord: found.claimRecord } : {},
    );
    if (o.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(formatReplay(result, found.simulationId));
    process.exitCode = REPLAY_EXIT_CODES[result.status];
  });

/** Exit codes of `claims replay` (2 stays the usage/configuration error of every command). */
const REPLAY_EXIT_CODES: Record<ReplayResult["status"], number> = { IDENTICAL: 0, DIFFERENT: 1, INCOMPLETE: 3 };

function formatReplay(result: ReplayResult, simulationId: string): string {
  const marks = { IDENTICAL: "✓", DIFFERENT: "✗", INCOMPLETE: "?" } as const;
  const lines = [`Replay of ${result.claimId} (run ${simulationId}), from recorded events, no model calls:`];
  for (const s of result.steps)
    lines.push(
      `  ${marks[s.status]} ${s.step.padEnd(10)} ${s.detail}${s.status === "IDENTICAL" ? "" : ` (${s.status})`}`,
    );
  const first = result.steps.find((s) => s.status === result.status);
  if (result.status === "IDENTICAL")
    lines.push(`Identical: ${result.outcome ?? "same outcome"} ${result.reasonCode ?? ""}`.trimEnd());
  else if (result.status === "DIFFERENT")
    lines.push(`DIFFERENT: the recorded decision does not reproduce (${first?.step}: ${first?.detail})`);
  else lines.push(`INCOMPLETE: the recorded decision cannot be replayed in full (${first?.step}: ${first?.detail})`);
  return `${lines.join("\n")}\n`;
}

registerReviewCommands(program);
registerReviewersCommands(program);
registerListCommand(program);
registerBacktestCommand(program);
registerReconcileCommand(program);
registerAwsCommands(program);

/** With --json, errors are also printed on stdout as `{ error: { code, message, issues? } }` (the HTTP API's shape). */
function printJsonError(code: string, message: string, issues?: unknown[]) {
  if (process.argv.slice(2).includes("--json"))
    process.stdout.write(`${JSON.stringify({ error: { code, message, ...(issues ? { issues } : {}) } }, null, 2)}\n`);
}

// Everything the CLI writes (the data directory's runs, store, journals, credentials, reports) is owner-only.
process.umask(0o077);
try {
  await program.parseAsync(process.argv);
} catch (e) {
  process.exitCode = 2;
  if (e instanceof CommanderError) {
    // commander has printed the message (or the help); usage errors exit 2, help and version 0.
    process.exitCode = e.exitCode === 0 ? 0 : 2;
    if (e.exitCode !== 0) printJsonError("CLI_USAGE", e.message.replace(/^error: /, ""));
  } else if (e instanceof SourceFileError) {
    process.stderr.write(`${e.message}\n`);
    printJsonError(e.code, `${e.file} is invalid`, e.issues);
  } else if (e instanceof ClaimsError || e instanceof InvalidArgumentError) {
    // A known failure (bad usage, a refused agent, a stack that could not start): its message says it all.
    const cause = e.cause instanceof Error && !e.message.includes(e.cause.message) ? ` (${e.cause.message})` : "";
    process.stderr.write(`claims: ${e.message}${cause}\n`);
    printJsonError(e instanceof ClaimsError ? e.code : "CLI_USAGE", `${e.message}${cause}`);
  } else {
    // Not expected: still no stack trace unless asked for.
    const error = e instanceof Error ? e : new Error(String(e));
    process.stderr.write(
      `claims: ${error.message}${process.env.CLAIMS_DEBUG ? `\n${error.stack ?? ""}` : "\n  (set CLAIMS_DEBUG=1 to see where it happened)"}\n`,
    );
    printJsonError("INTERNAL", error.message);
  }
}
