// The bearer-token authorizer: simple responses, constant-time comparison, the token never logged.
import type { APIGatewayRequestAuthorizerEventV2 } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { recordingLogger } from "../local/testing/stack-fixture.ts";
import { bearerToken, createAuthorizerHandler, tokensEqual } from "./authorizer.ts";

const TOKEN = "s3cret-token-value";

function event(headers: Record<string, string>): APIGatewayRequestAuthorizerEventV2 {
  return {
    version: "2.0",
    type: "REQUEST",
    routeArn: "arn:test",
    routeKey: "POST /claims",
    rawPath: "/claims",
    rawQueryString: "",
    cookies: [],
    identitySource: headers.authorization ? [headers.authorization] : [],
    headers,
    requestContext: {} as APIGatewayRequestAuthorizerEventV2["requestContext"],
  };
}

describe("bearerToken", () => {
  it.each([
    ["Bearer abc", "abc"],
    ["bearer abc", "abc"],
    ["Bearer   abc  ", "abc"],
    ["Basic abc", undefined],
    ["Bearer", undefined],
    ["Bearer a b", undefined],
    [undefined, undefined],
  ])("reads %j as %j", (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe("tokensEqual", () => {
  it.each([
    [TOKEN, TOKEN, true],
    [TOKEN, `${TOKEN}x`, false],
    [TOKEN.slice(0, -1), TOKEN, false],
    ["", "", false],
    ["S3cret-token-value", TOKEN, false],
  ])("%j vs %j is %s", (a, b, equal) => {
    expect(tokensEqual(a, b)).toBe(equal);
  });
});

describe("the authorizer", () => {
  it.each([
    ["the right token", { authorization: `Bearer ${TOKEN}` }, true],
    ["a wrong token", { authorization: "Bearer guess" }, false],
    ["no header", {} as Record<string, string>, false],
    ["another scheme", { authorization: `Basic ${TOKEN}` }, false],
  ])("with %s answers isAuthorized %s", async (_case, headers, allowed) => {
    const log = recordingLogger();
    const handler = createAuthorizerHandler(() => TOKEN, { logger: log.logger });
    expect(await handler(event(headers))).toEqual({ isAuthorized: allowed });
    expect(log.text()).not.toContain(TOKEN);
  });

  it("denies an event it cannot read", async () => {
    const handler = createAuthorizerHandler(() => TOKEN, { logger: recordingLogger().logger });
    expect(await handler({ headers: "nope" } as unknown as APIGatewayRequestAuthorizerEventV2)).toEqual({
      isAuthorized: false,
    });
  });
});
