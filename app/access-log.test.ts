import { describe, expect, it } from "vitest";
import { ACCESS_LOG_FIELDS, accessLogFormat, accessLogLine, type AccessLogValues } from "./access-log.ts";

const POST: AccessLogValues = {
  requestId: "cJ8nHiXXoAMEJzQ=",
  routeKey: "POST /claims",
  path: "/claims",
  status: 502,
  responseLatency: 38,
  integrationRequestId: "6d68ca91-49c9-448d-89b8-7ca3e6dc66aa",
  error: "The Lambda function returned the following error: Task timed out after 10.00 seconds",
  authorizerError: "-",
  ip: "203.0.113.7",
  userAgent: "python-requests/2.32.3",
};

describe("the API access-log format", () => {
  it("is a JSON object once every variable is filled, one key per field, numbers bare", () => {
    const filled = accessLogFormat().replace(/\$context\.[A-Za-z.]+/g, "7");
    const parsed = JSON.parse(filled) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(Object.keys(ACCESS_LOG_FIELDS));
    for (const [name, field] of Object.entries(ACCESS_LOG_FIELDS)) {
      expect(parsed[name], name).toBe(field.type === "number" ? 7 : "7");
    }
  });

  it("names every field's variable once and carries the request id API Gateway requires", () => {
    const format = accessLogFormat();
    expect(format).toContain('"requestId":"$context.requestId"');
    expect(format).toContain('"error":"$context.integrationErrorMessage"');
    for (const field of Object.values(ACCESS_LOG_FIELDS)) {
      expect(format.split(field.variable).length - 1, field.variable).toBe(1);
    }
  });

  it("leaves out the fields that repeat others (the event's time, the method, the integration's status and latency)", () => {
    const format = accessLogFormat();
    for (const variable of [
      "requestTime",
      "httpMethod",
      "integration.status",
      "integration.latency",
      "integrationStatus",
    ]) {
      expect(format).not.toContain(`$context.${variable}`);
    }
  });
});

describe("an access-log line", () => {
  it("reads back as the values it was filled with", () => {
    expect(JSON.parse(accessLogLine(POST))).toEqual(POST);
  });

  it("is the format with each variable replaced, nothing else", () => {
    const line = accessLogLine(POST);
    expect(line).not.toContain("$context");
    expect(line.startsWith('{"requestId":"cJ8nHiXXoAMEJzQ=","routeKey":"POST /claims"')).toBe(true);
    expect(line).toContain('"status":502,"responseLatency":38');
  });

  it("refuses a value that would break the line, naming the field", () => {
    expect(() => accessLogLine({ ...POST, userAgent: 'curl "8"' })).toThrow(/userAgent/);
    expect(() => accessLogLine({ ...POST, path: "C:\\claims" })).toThrow(/path/);
    expect(() => accessLogLine({ ...POST, status: Number.NaN })).toThrow(/status must be a finite number/);
  });
});
