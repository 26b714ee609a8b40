// The HTTP API's access-log line, defined once: its fields as API Gateway `$context` variables. infra/api.ts sets
// the format it renders on the stage; bench/cost.ts prices the line it writes (an example filled the same way).
// Plain data: no SST, no I/O.

/** One field of the line: the `$context` variable API Gateway fills in, and whether its value is a JSON number. */
interface AccessLogField {
  readonly variable: `$context.${string}`;
  readonly type: "string" | "number";
}

/**
 * The fields, in the line's order. Left out of SST's default format, because other fields already say it:
 * `requestTime` (CloudWatch stamps every event), `httpMethod` (in `routeKey`), and the integration's status and
 * latency (`status` and `responseLatency` are what the caller got, and when). Added: the error of a failed
 * integration (its 5xx) or authorizer. A value API Gateway does not have is written `-`.
 */
export const ACCESS_LOG_FIELDS = {
  /** API Gateway requires it (or `extendedRequestId`) in every access-log format. */
  requestId: { variable: "$context.requestId", type: "string" },
  /** The route that matched, method included (`POST /claims`); `$default` when none did. */
  routeKey: { variable: "$context.routeKey", type: "string" },
  /** The path asked for (a claim's id is in it, never a customer's text). */
  path: { variable: "$context.path", type: "string" },
  /** The status the caller got: always a number. */
  status: { variable: "$context.status", type: "number" },
  /** Milliseconds from the request to the response: always a number. */
  responseLatency: { variable: "$context.responseLatency", type: "number" },
  /** The function's request id: the `requestId` of its log lines and platform lines (`-` when no function ran). */
  integrationRequestId: { variable: "$context.integration.requestId", type: "string" },
  /** Why the integration failed (a function that threw, timed out or answered in the wrong shape); `-` otherwise. */
  error: { variable: "$context.integrationErrorMessage", type: "string" },
  /** Why the authorizer failed (a 500 before any route's function ran); `-` otherwise. */
  authorizerError: { variable: "$context.authorizer.error", type: "string" },
  ip: { variable: "$context.identity.sourceIp", type: "string" },
  userAgent: { variable: "$context.identity.userAgent", type: "string" },
} as const satisfies Record<string, AccessLogField>;

export type AccessLogFieldName = keyof typeof ACCESS_LOG_FIELDS;

/** The values of one line: a number for a number field, a string (`-` when missing) for the others. */
export type AccessLogValues = {
  readonly [K in AccessLogFieldName]: (typeof ACCESS_LOG_FIELDS)[K]["type"] extends "number" ? number : string;
};

const FIELDS = Object.entries(ACCESS_LOG_FIELDS) as [AccessLogFieldName, AccessLogField][];

/**
 * The format API Gateway takes (`accessLogSettings.format`): one JSON object, each string variable in quotes and
 * each number bare, so a filled line is JSON with numbers as numbers. Written out, not `JSON.stringify`d: that
 * would escape the quotes around a variable (SST's default does, and its lines carry `"\"…\""` strings).
 */
export function accessLogFormat(): string {
  const field = ([name, f]: [string, AccessLogField]) =>
    `"${name}":${f.type === "number" ? f.variable : `"${f.variable}"`}`;
  return `{${FIELDS.map(field).join(",")}}`;
}

/**
 * A line as API Gateway writes it: the format with each variable replaced by its value (the cost bench prices
 * its bytes). Values are written as they are, so a string value with a quote or a backslash is refused.
 */
export function accessLogLine(values: AccessLogValues): string {
  for (const [name, f] of FIELDS) {
    const value = values[name];
    if (f.type === "number" ? !Number.isFinite(value) : typeof value !== "string" || /["\\]/.test(value)) {
      throw new TypeError(
        `access-log example: ${name} must be ${f.type === "number" ? "a finite number" : "a string without quotes or backslashes"}, got ${JSON.stringify(value)}`,
      );
    }
  }
  const byVariable = new Map<string, string>(FIELDS.map(([name, f]) => [f.variable, String(values[name])]));
  return accessLogFormat().replace(/\$context\.[A-Za-z.]+/g, (variable) => byVariable.get(variable) ?? variable);
}
