// Test support for the local stack and the handlers: a stack on a frozen clock with the rules
// model, API Gateway v2 and SQS events built by hand, and a logger that records what it is given.
import { fileURLToPath } from "node:url";
import type { APIGatewayProxyEventV2, SQSEvent } from "aws-lambda";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { frozenClock } from "../../core/crew/index.ts";
import type { FrozenClock } from "../../core/crew/index.ts";
import { createRulesModel } from "../../core/agents/rules-model.ts";
import type { LlmPort } from "../../core/llm/index.ts";
import { loadConfig } from "../../functions/composition/config-file.ts";
import type { HandlerLogger } from "../../functions/observability/logger.ts";
import { matchRoute } from "../http-front.ts";
import { startLocalStack } from "../stack.ts";
import type { LocalStack, LocalStackOptions } from "../stack.ts";

/** The instant test stacks are frozen at. */
export const TEST_NOW = Date.parse("2026-06-01T12:00:00Z");
/** The bundled configuration. */
export const CONFIG_PATH = fileURLToPath(new URL("../../scenarios/config.yaml", import.meta.url));
/** The bundled scenarios. */
export const SCENARIOS_PATH = fileURLToPath(new URL("../../scenarios/scenarios.yaml", import.meta.url));

/** The deterministic rules model for the bundled agent. */
export function rulesModel(nowMs = TEST_NOW): LlmPort {
  const config = loadConfig(CONFIG_PATH, nowMs);
  return createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
}

/** A local stack on a frozen clock with the rules model and quiet handler logs (override anything). */
export async function startTestStack(
  overrides: Partial<LocalStackOptions> = {},
): Promise<LocalStack & { clock: FrozenClock }> {
  const clock = frozenClock(TEST_NOW);
  const stack = await startLocalStack({
    configPath: CONFIG_PATH,
    clock,
    llm: rulesModel(),
    logLevel: "SILENT",
    sweepEveryMs: 0,
    settleTimeoutMs: 20_000,
    ...overrides,
  });
  return { ...stack, clock };
}

/** Submits `body` through the stack's runtime and waits until the claim is final. */
export async function decideOnStack(s: LocalStack, body: unknown): Promise<ClaimRecord> {
  const submitted = await s.runtime.submit(body);
  if (!submitted.ok) throw new Error(`refused: ${submitted.message}`);
  const record = await s.runtime.settle(submitted.claimId);
  if (!record) throw new Error(`claim ${submitted.claimId} vanished`);
  return record;
}

/** An API Gateway v2 event for `METHOD /path?query`, routed like infra/api.ts (routeKey `$default` when no route matches). */
export function apiEvent(
  method: string,
  pathAndQuery: string,
  init: { body?: string; headers?: Record<string, string>; isBase64Encoded?: boolean; reviewer?: string } = {},
): APIGatewayProxyEventV2 {
  const [path = "", rawQuery = ""] = pathAndQuery.split("?", 2);
  const query = Object.fromEntries(new URLSearchParams(rawQuery));
  const route = matchRoute(method, path);
  return {
    version: "2.0",
    routeKey: route?.routeKey ?? "$default",
    rawPath: path,
    rawQueryString: rawQuery,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    headers: Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    ...(route && Object.keys(route.pathParameters).length > 0 ? { pathParameters: route.pathParameters } : {}),
    requestContext: {
      accountId: "000000000000",
      apiId: "test",
      domainName: "localhost",
      domainPrefix: "localhost",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "test" },
      requestId: `req-${method}-${path}`,
      routeKey: route?.routeKey ?? "$default",
      stage: "$default",
      time: "",
      timeEpoch: 0,
      // A reviewer route as the reviewer authorizer passes it on: the reviewer it authenticated (default `reviewer`).
      ...(route?.auth === "reviewer"
        ? { authorizer: { lambda: { reviewer_id: init.reviewer ?? "reviewer" } } as never }
        : {}),
    },
    ...(init.body === undefined ? {} : { body: init.body }),
    isBase64Encoded: init.isBase64Encoded ?? false,
  };
}

/** An SQS event with one record per body (ids m0, m1, …). */
export function sqsEvent(records: readonly { body: string; receiveCount?: number; groupId?: string }[]): SQSEvent {
  return {
    Records: records.map((r, i) => ({
      messageId: `m${i}`,
      receiptHandle: `rh${i}`,
      body: r.body,
      attributes: {
        ApproximateReceiveCount: String(r.receiveCount ?? 1),
        SentTimestamp: "0",
        SenderId: "test",
        ApproximateFirstReceiveTimestamp: "0",
        ...(r.groupId ? { MessageGroupId: r.groupId, MessageDeduplicationId: `d${i}` } : {}),
      },
      messageAttributes: {},
      md5OfBody: "",
      eventSource: "aws:sqs",
      eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:test${r.groupId ? ".fifo" : ""}`,
      awsRegion: "us-east-1",
    })),
  };
}

/** One recorded log line. */
export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  fields: unknown[];
}

/** A logger that keeps every line (and everything logged, serialised, for "never logged" checks). */
export function recordingLogger(): { logger: HandlerLogger; lines: LogLine[]; text(): string } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine["level"]) =>
    (message: unknown, ...fields: unknown[]) => {
      lines.push({ level, message: String(message), fields });
    };
  const logger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  } as unknown as HandlerLogger;
  return { logger, lines, text: () => JSON.stringify(lines) };
}
