// Cognito's SRP sign-in, the client side: its proof checked by a server that holds only the verifier Cognito keeps
// (v = g^x), computing the shared secret from its own side of SRP-6a — a wrong password or a wrong step in the
// arithmetic gives another key and another signature. And the challenge sequence of a first sign-in with MFA.
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { G, K, modPow, N, padHex, passwordExponent, scramble, sessionKey, srpTimestamp } from "./cognito-srp.ts";
import { reviewerLogin } from "./reviewer-login.ts";

const POOL = "eu-west-1_Rev1ewers";
const USER_ID = "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718";
const PASSWORD = "correct horse battery staple";
const SALT = randomBytes(16).toString("hex");
const SECRET_BLOCK = randomBytes(64).toString("base64");

/** A Cognito-shaped SRP server for one user: it stores v = g^x, answers PASSWORD_VERIFIER and checks the proof. */
function srpServer(password: string) {
  const x = passwordExponent("Rev1ewers", USER_ID, password, SALT);
  const v = modPow(G, x, N);
  const b = BigInt(`0x${randomBytes(128).toString("hex")}`) % N;
  const B = (K * v + modPow(G, b, N)) % N;
  return {
    challenge: { SALT, SRP_B: padHex(B), SECRET_BLOCK, USER_ID_FOR_SRP: USER_ID, USERNAME: USER_ID },
    /** The signature the server expects from a client that sent A and knows the password. */
    expected(A: bigint, timestamp: string): string {
      const u = scramble(A, B);
      const S = modPow((A * modPow(v, u, N)) % N, b, N);
      return createHmac("sha256", sessionKey(S, u))
        .update(
          Buffer.concat([
            Buffer.from("Rev1ewers"),
            Buffer.from(USER_ID),
            Buffer.from(SECRET_BLOCK, "base64"),
            Buffer.from(timestamp),
          ]),
        )
        .digest("base64");
    },
  };
}

/** A Cognito stand-in answering the SDK's commands by name, for one scripted sign-in. */
function cognito(server: ReturnType<typeof srpServer>, firstSignIn: boolean) {
  const seen: { command: string; input: Record<string, unknown> }[] = [];
  let A = 0n;
  const answers: Record<string, (input: Record<string, unknown>) => unknown> = {
    InitiateAuthCommand: (input) => {
      A = BigInt(`0x${(input.AuthParameters as { SRP_A: string }).SRP_A}`);
      return { ChallengeName: "PASSWORD_VERIFIER", ChallengeParameters: server.challenge };
    },
    RespondToAuthChallengeCommand: (input) => {
      const r = input.ChallengeResponses as Record<string, string>;
      switch (input.ChallengeName) {
        case "PASSWORD_VERIFIER":
          if (r.PASSWORD_CLAIM_SIGNATURE !== server.expected(A, r.TIMESTAMP!))
            throw Object.assign(new Error("Incorrect username or password."), { name: "NotAuthorizedException" });
          return firstSignIn
            ? { ChallengeName: "NEW_PASSWORD_REQUIRED", Session: "s1", ChallengeParameters: {} }
            : { ChallengeName: "SOFTWARE_TOKEN_MFA", Session: "s1", ChallengeParameters: {} };
        case "NEW_PASSWORD_REQUIRED":
          return { ChallengeName: "MFA_SETUP", Session: "s2", ChallengeParameters: {} };
        case "MFA_SETUP":
          return { AuthenticationResult: { IdToken: "id-token-after-setup" } };
        case "SOFTWARE_TOKEN_MFA":
          return r.SOFTWARE_TOKEN_MFA_CODE === "123456" ? { AuthenticationResult: { IdToken: "id-token" } } : {};
      }
      throw new Error(`unexpected ${String(input.ChallengeName)}`);
    },
    AssociateSoftwareTokenCommand: () => ({ SecretCode: "JBSWY3DPEHPK3PXP", Session: "s3" }),
    VerifySoftwareTokenCommand: (input) => ({
      Status: input.UserCode === "123456" ? "SUCCESS" : "ERROR",
      Session: "s4",
    }),
  };
  return {
    seen,
    client: {
      send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        seen.push({ command: command.constructor.name, input: command.input });
        return answers[command.constructor.name]!(command.input);
      },
    } as never,
  };
}

const prompts = (password: string) => ({
  password: async () => password,
  newPassword: async () => "a brand new passphrase",
  totpCode: async () => "123456",
  shown: [] as string[],
  showTotpSecret(uri: string) {
    this.shown.push(uri);
  },
});

describe("Cognito SRP: the client's proof", () => {
  it("is the one a server holding only the verifier computes, for the right password only", async () => {
    const server = srpServer(PASSWORD);
    const ok = cognito(server, false);
    await expect(
      reviewerLogin({
        cognito: ok.client,
        userPoolId: POOL,
        clientId: "c",
        username: "rita@example.com",
        prompts: prompts(PASSWORD),
      }),
    ).resolves.toBe("id-token");
    // The password itself is in no request.
    expect(JSON.stringify(ok.seen)).not.toContain(PASSWORD);
    expect(ok.seen[0]).toMatchObject({
      command: "InitiateAuthCommand",
      input: { AuthFlow: "USER_SRP_AUTH", ClientId: "c" },
    });
    const wrong = cognito(server, false);
    await expect(
      reviewerLogin({
        cognito: wrong.client,
        userPoolId: POOL,
        clientId: "c",
        username: "rita@example.com",
        prompts: prompts("wrong"),
      }),
    ).rejects.toThrow(/Incorrect username or password/);
  });

  it("formats the timestamp as Cognito reads it (day unpadded, UTC)", () => {
    expect(srpTimestamp(new Date("2026-12-06T07:05:09Z"))).toBe("Sun Dec 6 07:05:09 UTC 2026");
  });

  it("pads hex as Cognito does: even length, a leading 00 when the top bit is set", () => {
    expect(padHex(0xfn)).toBe("0f");
    expect(padHex(0x80n)).toBe("0080");
    expect(padHex(0x7fffn)).toBe("7fff");
  });
});

describe("claims reviewer-login: a first sign-in", () => {
  it("sets the new password, shows the authenticator's secret, verifies its first code, and returns the ID token", async () => {
    const stub = cognito(srpServer(PASSWORD), true);
    const p = prompts(PASSWORD);
    const token = await reviewerLogin({
      cognito: stub.client,
      userPoolId: POOL,
      clientId: "c",
      username: "rita@example.com",
      prompts: p,
    });
    expect(token).toBe("id-token-after-setup");
    expect(stub.seen.map((s) => `${s.command} ${String(s.input.ChallengeName ?? "")}`.trim())).toEqual([
      "InitiateAuthCommand",
      "RespondToAuthChallengeCommand PASSWORD_VERIFIER",
      "RespondToAuthChallengeCommand NEW_PASSWORD_REQUIRED",
      "AssociateSoftwareTokenCommand",
      "VerifySoftwareTokenCommand",
      "RespondToAuthChallengeCommand MFA_SETUP",
    ]);
    expect(p.shown).toEqual([
      "otpauth://totp/Claims%20Crew%3Arita%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Claims%20Crew",
    ]);
  });
});
