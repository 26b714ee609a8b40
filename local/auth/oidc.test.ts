// OIDC reviewers locally, against a real issuer (oauth2-mock-server: discovery, JWKS, signed JWTs): the review routes
// verify the bearer JWT as API Gateway's JWT authorizer does, and the review function records the token's `sub`
// — only for members of the `reviewers` group or holders of the `claims/review` scope.
import { readFileSync } from "node:fs";
import { generateKeyPair, SignJWT } from "jose";
import { OAuth2Server } from "oauth2-mock-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../core/claim/config.ts";
import { createRulesModel } from "../../core/agents/rules-model.ts";
import { createAuthorizerHandler } from "../../functions/authorizer.ts";
import { createIntakeApiHandler } from "../../functions/intake-api.ts";
import { createReviewApiHandler } from "../../functions/review-api.ts";
import { createInProcessPipeline } from "../../pipeline/in-process.ts";
import { startHttpFront } from "../http-front.ts";
import type { HttpFront } from "../http-front.ts";
import { createJwtAuthorizer } from "./oidc.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = parseConfig(
  readFileSync(new URL("../../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  NOW,
);
const quiet = { info() {}, warn() {}, error() {}, debug() {} } as never;
const issuer = new OAuth2Server();
const p = createInProcessPipeline({
  agent: config.agent,
  orders: config.orders,
  llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
  clock: { now: () => NOW },
});
let front: HttpFront;

beforeAll(async () => {
  await issuer.issuer.keys.generate("RS256");
  await issuer.start(0, "127.0.0.1");
  front = await startHttpFront({
    port: 0,
    functions: {
      intakeApi: createIntakeApiHandler(() => p.deps, { logger: quiet }),
      reviewApi: createReviewApiHandler(() => p.deps, { logger: quiet }),
    },
    authorizers: {
      intake: createAuthorizerHandler(() => "intake-token-0123456789", { logger: quiet }),
      reviewer: createJwtAuthorizer({ issuer: issuer.issuer.url!, audience: ["claims-reviewers"] }),
    },
  });
  const { record } = await p.decide(
    { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" } },
    { claimId: "clm_esc" },
  );
  expect(record?.verdict).toBe("ESCALATE");
}, 60_000);

afterAll(async () => {
  await front?.stop();
  await issuer.stop();
});

const token = (payload: Record<string, unknown>, expiresIn = 600) =>
  issuer.issuer.buildToken({
    expiresIn,
    scopesOrTransform: (_header, claims) => {
      delete claims.scope;
      Object.assign(claims, { aud: "claims-reviewers", ...payload });
    },
  });

const call = async (method: string, path: string, bearer: string, body?: unknown) => {
  const res = await fetch(`${front.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { error?: { code: string }; review?: unknown; items?: unknown[] },
  };
};

describe("reviewers from an OpenID Connect issuer", () => {
  it("refuses a token of another audience (aud or client_id), an expired one and a forged one with 401", async () => {
    expect(
      (
        await call(
          "GET",
          "/reviews",
          await token({ sub: "u1", aud: undefined, client_id: "other-app", scope: "claims/review" }),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await call(
          "GET",
          "/reviews",
          await token({ sub: "u1", aud: ["other-app", "another"], "cognito:groups": ["reviewers"] }),
        )
      ).status,
    ).toBe(401);
    expect(
      (await call("GET", "/reviews", await token({ sub: "u1", aud: "someone-else", "cognito:groups": ["reviewers"] })))
        .status,
    ).toBe(401);
    expect(
      (await call("GET", "/reviews", await token({ sub: "u1", "cognito:groups": ["reviewers"] }, -60))).status,
    ).toBe(401);
    const good = await token({ sub: "u1", "cognito:groups": ["reviewers"] });
    const [h, , s] = good.split(".");
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: "mallory", aud: "claims-reviewers", iss: issuer.issuer.url, "cognito:groups": ["reviewers"], exp: 9e9 })).toString("base64url")}.${s}`;
    expect((await call("GET", "/reviews", forged)).status).toBe(401);
    expect((await call("GET", "/reviews", "intake-token-0123456789")).status).toBe(401);
  });

  it("refuses a token with alg none, whatever it claims, with 401", async () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const now = Math.floor(NOW / 1000);
    const claims = {
      sub: "mallory",
      aud: "claims-reviewers",
      iss: issuer.issuer.url,
      "cognito:groups": ["reviewers"],
      iat: now,
      exp: 9e9,
    };
    for (const header of [{ alg: "none", typ: "JWT" }, { alg: "none" }, { alg: "None", typ: "JWT" }])
      expect((await call("GET", "/reviews", `${b64(header)}.${b64(claims)}.`)).status).toBe(401);
    // The same claims, signed by the issuer, pass: only the algorithm was wrong.
    expect(
      (await call("GET", "/reviews", await token({ sub: "mallory", "cognito:groups": ["reviewers"] }))).status,
    ).toBe(200);
  });

  it("refuses a token signed with a key the issuer does not publish (an unknown kid) with 401", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const payload = { sub: "mallory", aud: "claims-reviewers", "cognito:groups": ["reviewers"] };
    const sign = (kid: string | undefined) =>
      new SignJWT(payload)
        .setProtectedHeader({ alg: "RS256", ...(kid ? { kid } : {}) })
        .setIssuer(issuer.issuer.url!)
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(privateKey);
    expect((await call("GET", "/reviews", await sign("kid-nobody-published"))).status).toBe(401);
    // The issuer's own kid on a token our key signed is a forgery too.
    const published = issuer.issuer.keys.toJSON()[0] as { kid: string };
    expect((await call("GET", "/reviews", await sign(published.kid))).status).toBe(401);
    expect((await call("GET", "/reviews", await sign(undefined))).status).toBe(401);
  });

  it("refuses a valid token outside the reviewers group without the claims/review scope with 403", async () => {
    const outsider = await call("GET", "/reviews", await token({ sub: "u2", "cognito:groups": ["support"] }));
    expect(outsider.status).toBe(403);
    expect(outsider.body.error?.code).toBe("NOT_A_REVIEWER");
  });

  it("records the token's sub as the reviewer, for a group member or a holder of the scope", async () => {
    const scoped = await call("GET", "/reviews", await token({ sub: "svc-desk", scope: "claims/review" }));
    expect(scoped.status).toBe(200);
    expect(scoped.body.items).toHaveLength(1);
    const member = await token({ sub: "8f1c-alice", email: "alice@shop.example", "cognito:groups": ["reviewers"] });
    const posing = await call("POST", "/claims/clm_esc/review", member, {
      decision: "DENY",
      note: "n",
      reviewer: "bob",
    });
    expect(posing.body.error?.code).toBe("REVIEWER_MISMATCH");
    const denied = await call("POST", "/claims/clm_esc/review", member, { decision: "DENY", note: "fraud pattern" });
    expect(denied.status).toBe(200);
    expect(denied.body.review).toMatchObject({ status: "DENIED", reviewer: "8f1c-alice" });
    const decided = p.publisher.published.find((e) => e.detailType === "ReviewDecided");
    expect(decided?.detail).toMatchObject({ reviewer: "8f1c-alice" });
  });
});
