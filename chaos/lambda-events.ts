// The events Lambda hands the handlers, built for the chaos runs and the HTTP fuzz: API Gateway HTTP API
// (payload 2.0) requests and SQS batches, with the attributes the handlers read.
import type { APIGatewayProxyEventV2, Context, SQSEvent } from "aws-lambda";
import type { HandlerLogger } from "../functions/observability/logger.ts";
import { ROUTES } from "../app/manifest.ts";

/** An API Gateway v2 event for `routeKey` (e.g. `POST /claims`), as API Gateway builds it after matching the route. */
export function apiRequest(
  routeKey: string,
  rawPath: string,
  init: {
    body?: string;
    headers?: Record<string, string>;
    pathParameters?: Record<string, string>;
    query?: Record<string, string>;
    isBase64Encoded?: boolean;
    requestId?: string;
    reviewer?: string;
  } = {},
): APIGatewayProxyEventV2 {
  const method = routeKey.split(" ")[0] ?? "GET";
  return {
    version: "2.0",
    routeKey,
    rawPath,
    rawQueryString: new URLSearchParams(init.query ?? {}).toString(),
    headers: Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    ...(init.query && Object.keys(init.query).length > 0 ? { queryStringParameters: init.query } : {}),
    ...(init.pathParameters ? { pathParameters: init.pathParameters } : {}),
    requestContext: {
      accountId: "000000000000",
      apiId: "chaos",
      domainName: "localhost",
      domainPrefix: "localhost",
      http: { method, path: rawPath, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "chaos" },
      requestId: init.requestId ?? "chaos",
      routeKey,
      stage: "$default",
      time: "",
      timeEpoch: 0,
      // A reviewer route as the reviewer authorizer passes it on: the reviewer it authenticated.
      ...((ROUTES as Record<string, { auth: string }>)[routeKey]?.auth === "reviewer"
        ? { authorizer: { lambda: { reviewer_id: init.reviewer ?? "reviewer" } } as never }
        : {}),
    },
    ...(init.body === undefined ? {} : { body: init.body }),
    isBase64Encoded: init.isBase64Encoded ?? false,
  };
}

/** An SQS batch: one record per message, with its id, receive count and (FIFO) message group. */
export function sqsBatch(
  messages: readonly { id: string; body: string; receives: number; group?: string | undefined }[],
  queueArn: string,
): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.id,
      receiptHandle: `rh-${m.id}-${m.receives}`,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receives),
        SentTimestamp: "0",
        SenderId: "chaos",
        ApproximateFirstReceiveTimestamp: "0",
        ...(m.group !== undefined ? { MessageGroupId: m.group, MessageDeduplicationId: `${m.id}` } : {}),
      },
      messageAttributes: {},
      md5OfBody: "",
      eventSource: "aws:sqs",
      eventSourceARN: queueArn,
      awsRegion: "us-east-1",
    })),
  };
}

/** A Lambda context with what the Powertools batch processor reads. */
export const LAMBDA_CONTEXT = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: "chaos",
  functionVersion: "$LATEST",
  invokedFunctionArn: "arn:aws:lambda:us-east-1:000000000000:function:chaos",
  memoryLimitInMB: "256",
  awsRequestId: "chaos",
  logGroupName: "chaos",
  logStreamName: "chaos",
  getRemainingTimeInMillis: () => 60_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} as Context;

/** Error codes a handler logs in normal operation under faults: the message is retried and the retry repairs it. */
const EXPECTED_ERRORS = new Set(["INJECTED_CRASH", "VERSION_CONFLICT", "KERNEL_RETRY", "RETRY_LATER"]);

/** A logger that drops everything but the errors no fault explains (`unexpected`). */
export function watchingLogger(unexpected: (line: string) => void): HandlerLogger {
  const quiet = () => undefined;
  return {
    debug: quiet,
    info: quiet,
    warn: quiet,
    error: (message: unknown, ...fields: unknown[]) => {
      const error = (fields[0] as { error?: { name?: string; code?: string; message?: string } } | undefined)?.error;
      if (error?.code !== undefined && EXPECTED_ERRORS.has(error.code)) return;
      unexpected(
        `${String(message)}: ${error ? `${error.name ?? "Error"}${error.code ? ` ${error.code}` : ""}: ${error.message ?? ""}` : JSON.stringify(fields)}`,
      );
    },
  } as unknown as HandlerLogger;
}
