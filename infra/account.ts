// The account check of `sst deploy`, run first in sst.config.ts before any resource is declared: reads the
// account's Lambda concurrency in the deploy's region (lambda:GetAccountSettings, and lambda:GetFunctionConcurrency
// for what this stage's functions reserve already) and decides whether the request path reserves concurrency
// (app/capacity.ts decideReservation, CLAIMS_RESERVED_CONCURRENCY). `auto` (default) reserves only where the quota
// leaves Lambda its 100 unreserved, so a new account's deploy never fails half-way on "decreases account's
// UnreservedConcurrentExecution below its minimum value"; `on` on an account that cannot give it stops here,
// before anything is created, naming the quota. `claims deploy-check` says the same, and more, beforehand.
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { capacitySettingsFrom, decideReservation, reservations } from "../app/capacity.ts";
import type { ReservationDecision } from "../app/capacity.ts";
import { deployedFunctionName } from "../app/manifest.ts";
import type { FunctionKey } from "../app/manifest.ts";
import { InfraOrderError } from "./errors.ts";

let decision: ReservationDecision | undefined;

/** The deploy's Lambda concurrency, or why it could not be read. */
async function readLambda(functionNames: readonly string[]) {
  // A few seconds at most: an unreachable API must not hang the deploy (auto then reserves nothing).
  const client = new LambdaClient({
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 3000, requestTimeout: 5000 },
  });
  try {
    const region = await client.config.region();
    const settings = await client.send(new GetAccountSettingsCommand({}));
    const limit = settings.AccountLimit;
    if (limit?.ConcurrentExecutions === undefined || limit.UnreservedConcurrentExecutions === undefined)
      return { error: "lambda:GetAccountSettings answered without AccountLimit concurrency" };
    let reservedByThisStage = 0;
    for (const name of functionNames) {
      const out = await client.send(new GetFunctionConcurrencyCommand({ FunctionName: name })).catch((e: unknown) => {
        if ((e as { name?: string })?.name === "ResourceNotFoundException") return undefined;
        throw e;
      });
      reservedByThisStage += out?.ReservedConcurrentExecutions ?? 0;
    }
    return {
      quotas: {
        region,
        lambda: {
          concurrentExecutions: limit.ConcurrentExecutions,
          unreservedConcurrentExecutions: limit.UnreservedConcurrentExecutions,
          reservedByThisStage,
        },
      },
    };
  } catch (e) {
    return { error: `${(e as Error)?.name ?? "Error"}: ${(e as Error)?.message ?? String(e)}` };
  } finally {
    client.destroy();
  }
}

/**
 * Decides the stage's reserved concurrency from CLAIMS_RESERVED_CONCURRENCY and the account (read only when the
 * setting is not `off`); throws AccountCapacityError, before anything is created, when `on` cannot be given.
 */
export async function checkAccount(): Promise<ReservationDecision> {
  const settings = capacitySettingsFrom(process.env);
  const names = (Object.keys(reservations(settings.payments)) as FunctionKey[]).map((key) =>
    deployedFunctionName($app.stage, key),
  );
  const read = settings.reservedConcurrency === "off" ? { error: "not read" } : await readLambda(names);
  decision = decideReservation(settings.reservedConcurrency, settings.payments, read);
  console.log(`claims-crew: reserved concurrency: ${decision.reserve ? "yes" : "no"} — ${decision.why}`);
  return decision;
}

/** Whether the request path reserves concurrency on this deploy (checkAccount must have run). */
export function reservesConcurrency(): boolean {
  if (decision === undefined)
    throw new InfraOrderError("infra/account.ts checkAccount() must run before any function is declared");
  return decision.reserve;
}
