// Who may decide reviews on AWS (infra/README.md "Reviewers on AWS"): the review routes use API Gateway's JWT
// authorizer against an OpenID Connect issuer. By default the app creates it: a Cognito user pool where only an
// administrator creates users (no self sign-up), an app client (no secret) whose id is the tokens' audience, and
// the `reviewers` group whose members may decide (`cognito:groups`, checked by the review function). With
// CLAIMS_REVIEWER_OIDC_ISSUER and CLAIMS_REVIEWER_OIDC_AUDIENCE the operator's own IdP is used instead and no pool
// is created. No function calls Cognito: no IAM is granted for it.
import { settings } from "./settings.ts";

/** The group whose members may decide (the review function's REVIEWERS_GROUP; infra/wiring.test.ts holds them equal). */
export const REVIEWERS_GROUP = "reviewers";

/** The app's user pool of reviewers, its client and group; undefined with the operator's own issuer. */
function createReviewerPool() {
  const pool = new sst.aws.CognitoUserPool("Reviewers", {
    usernames: ["email"],
    transform: {
      userPool: {
        // Reviewers are added by an administrator (admin-create-user), never by signing themselves up.
        adminCreateUserConfig: { allowAdminCreateUserOnly: true },
        // A production pool survives a mistaken delete.
        deletionProtection: settings.isProduction ? "ACTIVE" : "INACTIVE",
      },
    },
  });
  // A public client (no secret): reviewers sign in with their password (SRP, or USER_PASSWORD_AUTH from the AWS CLI).
  const client = pool.addClient("ReviewerClient", {
    transform: {
      client: {
        generateSecret: false,
        explicitAuthFlows: ["ALLOW_USER_SRP_AUTH", "ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
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
const region = aws.getRegionOutput().apply((r: { region: string }) => r.region);
export const reviewerJwt = reviewerPool
  ? {
      // Cognito's issuer: https://cognito-idp.<region>.amazonaws.com/<pool id> (the pool id names its region too).
      issuer: $interpolate`https://cognito-idp.${region}.amazonaws.com/${reviewerPool.pool.id}`,
      audiences: [reviewerPool.client.id],
    }
  : { issuer: settings.reviewerOidc!.issuer, audiences: settings.reviewerOidc!.audiences };
