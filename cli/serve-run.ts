// `claims serve`'s run (docs/cli.md, docs/local-stack.md): the local stack and the HTTP API until interrupted. Imported
// only when `claims serve` runs, so `claims serve --help` loads nothing heavy (cli/command-serve.ts registers it).
import { paymentProviderNameFrom } from "../functions/composition/payments.ts";
import { missingExecutorSecrets } from "../app/payment-provider.ts";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";

import { describePreflight, PREFLIGHT_RECHECK_MS } from "../adapters/llm/index.ts";
import { llmOutageHoldMsFromEnv, stepTimersFromEnv } from "../pipeline/deps.ts";
import type { StepTimerMode } from "../pipeline/deps.ts";
import { localLlm } from "../local/serve-llm.ts";
import { parseConfig } from "../core/claim/config.ts";
import { frozenClock, systemClock } from "../core/crew/index.ts";
import { assertAgentAccepted } from "./batch.ts";
import { ignoredSummary } from "./config-check.ts";
import { dataDirFrom } from "./run-store.ts";
import { healthAnswer, startHttpFront } from "../local/http-front.ts";
import { ORDER_API_RECHECK_MS, orderApiMonitorFromEnv } from "../local/order-api-monitor.ts";
import { reviewerSetup } from "./reviewers.ts";
import { serverToken } from "./tokens.ts";
import { stateDirOf } from "./served-store.ts";
import { ROUTES, servedRouteKeys } from "../app/manifest.ts";
import type { RouteFact } from "../app/manifest.ts";
import { startLocalStack } from "../local/stack.ts";
import { stopOnSignals } from "./serve-signals.ts";
import { busProgress, destinationLines } from "./serve-console.ts";
import { CliError } from "./errors.ts";
import { mustExist, parseMaxOpen } from "./options.ts";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

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

/** CLAIMS_STEP_TIMERS of `claims serve` (default lazy: the stack's sweep arms a claim's first step timer); a bad value is a usage error (exit 2). */
function stepTimersOfServe(): StepTimerMode {
  try {
    return stepTimersFromEnv(process.env);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

/** The options `claims serve` parsed (cli/command-serve.ts). */
export interface ServeOptions {
  port: number;
  host: string;
  config: string;
  dataDir?: string;
  maxOpen?: number;
  now?: number;
  reviewers?: string;
}

/** Runs `claims serve` until SIGINT or SIGTERM. */
export async function runServe(o: ServeOptions): Promise<void> {
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
  const stepTimers = stepTimersOfServe();
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
    ...retentionSweep(config.retention?.customerTextDays, dataDir, clock),
    recordBusEvents: false,
    // The handlers' warnings as lines of text between the others (CLAIMS_LOG_FORMAT=json: Powertools' JSON).
    logFormat: process.env.CLAIMS_LOG_FORMAT?.trim().toLowerCase() === "json" ? "json" : "text",
    ...(maxOpen > 0 ? { maxOpenClaims: maxOpen } : {}),
    ...(llm.waits ? { waits: llm.waits } : {}),
    llmOutageHoldMs: outageHoldMs,
    stepTimers,
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
      healthAnswer(
        {
          llm: Boolean(llm.unreachable?.() || stack.handlerThread?.llmUnreachable()),
          orders: orders?.unreachable() ?? false,
        },
        stack.refundsDueSoon(),
      ),
    ...(reviewing.tokenSource ? { reviewerTokenSource: reviewing.tokenSource } : {}),
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
}

/** The retention policy as the sweep's companion: older claims' personal data erased in the data directory's runs and served claims. */
function retentionSweep(
  days: number | undefined,
  dataDir: string,
  clock: { now(): number },
): { onSweep?: () => Promise<unknown> } {
  if (days === undefined) return {};
  return {
    onSweep: async () => {
      const { sweepRetention } = await import("./customer-data.ts");
      const { writeReportFor } = await import("./report-run.ts");
      const { sweepServedRetention } = await import("./customer-data-served.ts");
      const now = new Date(clock.now());
      await sweepRetention(dataDir, days, now, (sim) => writeReportFor(dataDir, sim));
      // The claims this serve keeps: through its own table endpoint, as `claims erase` against a running serve.
      return sweepServedRetention(dataDir, days, now);
    },
  };
}
