// Who may decide reviews on AWS (infra/README.md "Reviewers on AWS"): the review routes use API Gateway's JWT
// authorizer against an OpenID Connect issuer. By default the app creates it: a Cognito user pool where only an
// administrator creates users (no self sign-up), an app client (no secret) whose id is the tokens' audience, and
// the `reviewers` group whose members may decide (`cognito:groups`, checked by the review function). With
// CLAIMS_REVIEWER_OIDC_ISSUER and CLAIMS_REVIEWER_OIDC_AUDIENCE the operator's own IdP is used instead and no pool
// is created. Reviewers sign in with SRP and a TOTP code (MFA required in production), and Cognito's threat
// protection audits sign-ins where the region has it. No function calls Cognito: no IAM is granted for it.
import { reviewerPoolName } from "../app/manifest.ts";
import { settings } from "./settings.ts";

/** The group whose members may decide (the review function's REVIEWERS_GROUP; infra/wiring.test.ts holds them equal). */
export const REVIEWERS_GROUP = "reviewers";

/**
 * The regions where Cognito threat protection (formerly advanced security) is available: every commercial region
 * but the ones AWS lists without it (Config rule cognito-user-pool-advanced-security-enabled). A region not named
 * here gets no threat protection rather than a failed deploy.
 */
export const THREAT_PROTECTION_REGIONS = [
  "us-east-1",
  "us-east-2",
  "us-west-1",
  "us-west-2",
  "ca-central-1",
  "sa-east-1",
  "eu-west-1",
  "eu-west-2",
  "eu-west-3",
  "eu-central-1",
  "eu-north-1",
  "eu-south-1",
  "ap-south-1",
  "ap-northeast-1",
  "ap-northeast-2",
  "ap-northeast-3",
  "ap-southeast-1",
  "ap-southeast-2",
  "me-south-1",
  "il-central-1",
] as const;

const region = aws.getRegionOutput().apply((r: { region: string }) => r.region);

/** Threat protection in audit mode where the setting asks for it and the region has it. */
const auditsSignIns = region.apply(
  (r: string) =>
    settings.reviewerPool.threatProtection === "audit" && (THREAT_PROTECTION_REGIONS as readonly string[]).includes(r),
);

/** The physical name of the pool (`claims-crew-<stage>-reviewers`): `claims teardown` finds it by this name. */
export const poolName = reviewerPoolName($app.stage);

/** The app's user pool of reviewers, its client and group; undefined with the operator's own issuer. */
function createReviewerPool() {
  const pool = new sst.aws.CognitoUserPool("Reviewers", {
    usernames: ["email"],
    // Reviewers approve refunds: a one-time code from an authenticator app (TOTP) at every sign-in, required in
    // production (optional on other stages, CLAIMS_REVIEWER_MFA). No SMS: no phone numbers to manage or spoof.
    mfa: settings.reviewerPool.mfa === "required" ? "on" : "optional",
    softwareToken: true,
    transform: {
      userPool: {
        name: poolName,
        // Reviewers are added by an administrator (admin-create-user), never by signing themselves up.
        adminCreateUserConfig: { allowAdminCreateUserOnly: true },
        // A production pool survives a mistaken delete (`claims teardown` turns this off first).
        deletionProtection: settings.isProduction ? "ACTIVE" : "INACTIVE",
        // Threat protection (SST's `advancedSecurity`, per region here): risky sign-ins (compromised credentials,
        // new devices) logged and counted, not blocked. It needs the Plus feature plan; without it, Essentials.
        userPoolAddOns: { advancedSecurityMode: auditsSignIns.apply((on: boolean) => (on ? "AUDIT" : "OFF")) },
        userPoolTier: auditsSignIns.apply((on: boolean) => (on ? "PLUS" : "ESSENTIALS")),
      },
    },
  });
  // A public client (no secret): reviewers sign in with SRP (the password never leaves their machine) and their
  // TOTP code; no USER_PASSWORD_AUTH. Refresh tokens keep a session for a working day.
  const client = pool.addClient("ReviewerClient", {
    transform: {
      client: {
        generateSecret: false,
        explicitAuthFlows: ["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
        // No hosted-UI OAuth flows (SST's defaults allow the implicit flow to a placeholder URL): the reviewers'
        // tools sign in through the Cognito API (SRP) only.
        allowedOauthFlowsUserPoolClient: false,
        allowedOauthFlows: undefined,
        allowedOauthScopes: undefined,
        callbackUrls: undefined,
        // A stolen refresh token stops working after 12 hours; revoked ones at once.
        refreshTokenValidity: 12,
        tokenValidityUnits: { refreshToken: "hours", accessToken: "minutes", idToken: "minutes" },
        accessTokenValidity: 60,
        idTokenValidity: 60,
        enableTokenRevocation: true,
        preventUserExistenceErrors: "ENABLED",
      },
    },
  });
  const group = new aws.cognito.UserGroup("ReviewersGroup", {
    userPoolId: pool.id,
    name: REVIEWERS_GROUP,
    description: "May list and decide human reviews of Claims Crew",
  });
  return { pool, client, group };
}

export const reviewerPool = settings.reviewerOidc === undefined ? createReviewerPool() : undefined;

/** The issuer and audiences the review routes' JWT authorizer accepts. */
export const reviewerJwt = reviewerPool
  ? {
      // Cognito's issuer: https://cognito-idp.<region>.amazonaws.com/<pool id> (the pool id names its region too).
      issuer: $interpolate`https://cognito-idp.${region}.amazonaws.com/${reviewerPool.pool.id}`,
      audiences: [reviewerPool.client.id],
    }
  : { issuer: settings.reviewerOidc!.issuer, audiences: settings.reviewerOidc!.audiences };
