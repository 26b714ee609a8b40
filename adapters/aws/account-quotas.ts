// Reads the AWS account quotas a deploy of the app relies on, with injected SDK clients: Lambda's concurrency
// (GetAccountSettings, and GetFunctionConcurrency for what the stage already reserves) and EventBridge's limits
// from Service Quotas (matched by quota name: the applied value where the account has one, else AWS's default).
// SQS publishes none of the limits the app relies on in Service Quotas; they are fixed and documented
// (infra/README.md#first-deploy). Used by `claims deploy-check`; the deploy itself reads Lambda's (infra/account.ts).
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand } from "@aws-sdk/client-lambda";
import type { LambdaClient } from "@aws-sdk/client-lambda";
import { ListAWSDefaultServiceQuotasCommand, ListServiceQuotasCommand } from "@aws-sdk/client-service-quotas";
import type { ServiceQuota, ServiceQuotasClient } from "@aws-sdk/client-service-quotas";
import { AccountReadError } from "./errors.ts";

/** Lambda's concurrency in the client's region, and what `functionNames` reserve already. */
export interface LambdaConcurrencyRead {
  readonly concurrentExecutions: number;
  readonly unreservedConcurrentExecutions: number;
  readonly reservedByThisStage: number;
}

/** Reads the account's Lambda concurrency and the reservations of `functionNames` (a missing function reserves 0). */
export async function readLambdaConcurrency(
  lambda: Pick<LambdaClient, "send">,
  functionNames: readonly string[],
): Promise<LambdaConcurrencyRead> {
  const settings = await lambda.send(new GetAccountSettingsCommand({})).catch((e: unknown) => {
    throw new AccountReadError("lambda:GetAccountSettings", e);
  });
  const limit = settings.AccountLimit;
  if (limit?.ConcurrentExecutions === undefined || limit.UnreservedConcurrentExecutions === undefined)
    throw new AccountReadError("lambda:GetAccountSettings", new Error("the answer has no AccountLimit concurrency"));
  let reservedByThisStage = 0;
  for (const name of functionNames) {
    const out = await lambda.send(new GetFunctionConcurrencyCommand({ FunctionName: name })).catch((e: unknown) => {
      if ((e as { name?: string })?.name === "ResourceNotFoundException") return undefined;
      throw new AccountReadError(`lambda:GetFunctionConcurrency ${name}`, e);
    });
    reservedByThisStage += out?.ReservedConcurrentExecutions ?? 0;
  }
  return {
    concurrentExecutions: limit.ConcurrentExecutions,
    unreservedConcurrentExecutions: limit.UnreservedConcurrentExecutions,
    reservedByThisStage,
  };
}

/** The quotas of one service, by name: the applied value where the account has one, else AWS's default. */
export async function readServiceQuotas(
  client: Pick<ServiceQuotasClient, "send">,
  serviceCode: string,
): Promise<Map<string, number>> {
  const list = async (applied: boolean) => {
    const out: ServiceQuota[] = [];
    let token: string | undefined;
    do {
      const input = { ServiceCode: serviceCode, MaxResults: 100, ...(token ? { NextToken: token } : {}) };
      const page = await client
        .send(applied ? new ListServiceQuotasCommand(input) : new ListAWSDefaultServiceQuotasCommand(input))
        .catch((e: unknown) => {
          throw new AccountReadError(
            `servicequotas:${applied ? "ListServiceQuotas" : "ListAWSDefaultServiceQuotas"} ${serviceCode}`,
            e,
          );
        });
      out.push(...(page.Quotas ?? []));
      token = page.NextToken;
    } while (token);
    return out;
  };
  const byName = new Map<string, number>();
  for (const q of await list(false)) if (q.QuotaName && q.Value !== undefined) byName.set(q.QuotaName, q.Value);
  for (const q of await list(true)) if (q.QuotaName && q.Value !== undefined) byName.set(q.QuotaName, q.Value);
  return byName;
}

/** The first quota whose name matches `pattern`. */
export function quotaNamed(quotas: ReadonlyMap<string, number>, pattern: RegExp): number | undefined {
  for (const [name, value] of quotas) if (pattern.test(name)) return value;
  return undefined;
}
