// `claims reviewer-login --pool <id> --client <id> --username <email> [--region R] [--quiet]` (infra/README.md
// "Reviewers on AWS"): signs a reviewer in to the app's Cognito pool with SRP (the password never leaves the
// machine) and her TOTP code, and prints her ID token for the review routes. On a first sign-in it answers
// NEW_PASSWORD_REQUIRED (a new password) and MFA_SETUP (prints the otpauth:// URI of her authenticator app, then
// verifies its first code). The Cognito calls it makes need no AWS credentials.
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline/promises";
import {
  AssociateSoftwareTokenCommand,
  CognitoIdentityProviderClient,
  InitiateAuthCommand,
  RespondToAuthChallengeCommand,
  VerifySoftwareTokenCommand,
} from "@aws-sdk/client-cognito-identity-provider";
import type { ChallengeNameType } from "@aws-sdk/client-cognito-identity-provider";
import { ephemeral, padHex, passwordVerifierResponse } from "./cognito-srp.ts";
import type { PasswordVerifierChallenge } from "./cognito-srp.ts";
import { CliError } from "./errors.ts";

/** What the sign-in asks the person for (a terminal prompt; a test answers them). */
export interface LoginPrompts {
  password(): Promise<string>;
  newPassword(): Promise<string>;
  /** The current code of her authenticator app. */
  totpCode(): Promise<string>;
  /** Shows the secret to add to her authenticator app (first sign-in with MFA). */
  showTotpSecret(uri: string, secret: string): void;
}

/** Signs `username` in to `userPoolId` with SRP and MFA; returns the ID token. */
export async function reviewerLogin(options: {
  cognito: Pick<CognitoIdentityProviderClient, "send">;
  userPoolId: string;
  clientId: string;
  username: string;
  prompts: LoginPrompts;
  random?: (bytes: number) => Buffer;
  now?: () => Date;
}): Promise<string> {
  const { cognito, clientId, userPoolId, username, prompts } = options;
  const client = ephemeral(options.random ?? randomBytes);
  const started = await cognito.send(
    new InitiateAuthCommand({
      AuthFlow: "USER_SRP_AUTH",
      ClientId: clientId,
      AuthParameters: { USERNAME: username, SRP_A: padHex(client.A) },
    }),
  );
  let challenge: ChallengeNameType | string | undefined = started.ChallengeName;
  let parameters = started.ChallengeParameters ?? {};
  let session = started.Session;
  let result = started.AuthenticationResult;
  let userId = parameters.USER_ID_FOR_SRP ?? username;
  for (let step = 0; !result && step < 6; step++) {
    let responses: Record<string, string>;
    switch (challenge) {
      case "PASSWORD_VERIFIER":
        userId = parameters.USER_ID_FOR_SRP ?? username;
        responses = passwordVerifierResponse(
          parameters as unknown as PasswordVerifierChallenge,
          client,
          userPoolId,
          await prompts.password(),
          (options.now ?? (() => new Date()))(),
        );
        break;
      case "NEW_PASSWORD_REQUIRED":
        responses = { USERNAME: userId, NEW_PASSWORD: await prompts.newPassword() };
        break;
      case "SELECT_MFA_TYPE":
        responses = { USERNAME: userId, ANSWER: "SOFTWARE_TOKEN_MFA" };
        break;
      case "SOFTWARE_TOKEN_MFA":
        responses = { USERNAME: userId, SOFTWARE_TOKEN_MFA_CODE: await prompts.totpCode() };
        break;
      case "MFA_SETUP": {
        const associated = await cognito.send(new AssociateSoftwareTokenCommand({ Session: session }));
        const secret = associated.SecretCode ?? "";
        prompts.showTotpSecret(
          `otpauth://totp/${encodeURIComponent(`Claims Crew:${username}`)}?secret=${secret}&issuer=${encodeURIComponent("Claims Crew")}`,
          secret,
        );
        const verified = await cognito.send(
          new VerifySoftwareTokenCommand({
            Session: associated.Session,
            UserCode: await prompts.totpCode(),
            FriendlyDeviceName: "authenticator",
          }),
        );
        if (verified.Status !== "SUCCESS")
          throw new CliError("the authenticator's code was not accepted: sign in again");
        session = verified.Session;
        responses = { USERNAME: userId };
        break;
      }
      default:
        throw new CliError(`Cognito asked for ${String(challenge)}, which reviewer-login does not answer`);
    }
    const answered = await cognito.send(
      new RespondToAuthChallengeCommand({
        ClientId: clientId,
        ChallengeName: challenge as ChallengeNameType,
        ChallengeResponses: responses,
        Session: session,
      }),
    );
    challenge = answered.ChallengeName;
    parameters = answered.ChallengeParameters ?? {};
    session = answered.Session;
    result = answered.AuthenticationResult;
  }
  if (!result?.IdToken) throw new CliError("Cognito did not sign the reviewer in (no ID token)");
  return result.IdToken;
}

/** Reads a line without echoing it (a password), or plainly (a code). */
async function ask(question: string, secret: boolean): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  if (secret) {
    // Echo nothing of what is typed.
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
      if (s.includes(question)) process.stderr.write(question);
    };
  }
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
    if (secret) process.stderr.write("\n");
  }
}

/** `claims reviewer-login`'s action (cli/aws-commands.ts registers it; this module loads only when it runs). */
export async function reviewerLoginCommand(opts: {
  pool: string;
  client: string;
  username: string;
  region?: string;
  quiet?: boolean;
}): Promise<void> {
  if (!process.stdin.isTTY) throw new CliError("reviewer-login asks for a password: run it in a terminal");
  const region = opts.region ?? opts.pool.split("_")[0];
  const cognito = new CognitoIdentityProviderClient({ region });
  try {
    const token = await reviewerLogin({
      cognito,
      userPoolId: opts.pool,
      clientId: opts.client,
      username: opts.username,
      prompts: {
        password: () => ask("Password: ", true),
        newPassword: () => ask("New password (first sign-in): ", true),
        totpCode: () => ask("Code from your authenticator app: ", false),
        showTotpSecret: (uri, secret) =>
          process.stderr.write(`Add this to your authenticator app:\n  ${uri}\n  (or type the secret ${secret})\n`),
      },
    });
    if (!opts.quiet) process.stderr.write("Signed in. Your ID token (valid 1 hour):\n");
    process.stdout.write(`${token}\n`);
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === "NotAuthorizedException" || name === "CodeMismatchException" || name === "UserNotFoundException")
      throw new CliError(`sign-in refused: ${(error as Error).message}`);
    throw error;
  } finally {
    cognito.destroy();
  }
}
