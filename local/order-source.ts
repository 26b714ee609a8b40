// The secrets of the local stack's order source (app/order-sources/; ORDER_SOURCE=http: the order API's token), from
// their variable (ORDER_API_TOKEN) or the first line of the file another variable names (ORDER_API_TOKEN_FILE),
// never from the command line (`ps` shows every argument to every local user). On AWS each is an SST secret;
// locally the stack hands it to the handlers as the same link.
import { readFileSync } from "node:fs";
import { OrderSourceSettingError } from "../app/errors.ts";
import { ORDER_SOURCE_VARS, orderSourceSecretsOf } from "../app/order-source.ts";
import type { OrderSourceKind, OrderSourceSecret, OrderSourceSecretLink } from "../app/order-source.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A declared secret's value, or OrderSourceSettingError naming the variable to set (both set is an error too:
 * which one was meant?). `who` is what needs it ("ORDER_SOURCE=http").
 */
function localSecret(secret: OrderSourceSecret, who: string, env: Env): string {
  const direct = env[secret.env]?.trim() || undefined;
  const fileVar = secret.fileEnv;
  const file = fileVar === undefined ? undefined : env[fileVar]?.trim() || undefined;
  if (direct !== undefined && file !== undefined)
    throw new OrderSourceSettingError(`set ${secret.env} or ${fileVar}, not both`);
  if (direct !== undefined) return direct;
  if (file === undefined || fileVar === undefined)
    throw new OrderSourceSettingError(
      `${who} needs ${secret.description}: set ${secret.env}${fileVar === undefined ? "" : `, or ${fileVar} to a file whose first line is the token`}`,
    );
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new OrderSourceSettingError(`${fileVar}=${file} cannot be read: ${(error as Error).message}`);
  }
  const token = text.split(/\r?\n/)[0]?.trim() ?? "";
  if (token === "") throw new OrderSourceSettingError(`${fileVar}=${file}: its first line is empty`);
  return token;
}

/** Every secret of `source` by its link, each read as `localSecret` does (none for the table). */
export function localOrderSourceSecrets(source: OrderSourceKind, env: Env): Record<OrderSourceSecretLink, string> {
  return Object.fromEntries(
    orderSourceSecretsOf(source).map(({ secret }) => [
      secret.link,
      localSecret(secret, `${ORDER_SOURCE_VARS.source}=${source}`, env),
    ]),
  ) as Record<OrderSourceSecretLink, string>;
}
