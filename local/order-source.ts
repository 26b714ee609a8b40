// The order API's token for the local stack (ORDER_SOURCE=http): from ORDER_API_TOKEN or the first line of the file
// ORDER_API_TOKEN_FILE names, never from the command line (`ps` shows every argument to every local user). On AWS
// it is the OrderApiToken secret; locally the stack hands it to the handlers as the same link.
import { readFileSync } from "node:fs";
import { OrderSourceSettingError } from "../app/errors.ts";
import { ORDER_SOURCE_VARS } from "../app/order-source.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The token, or OrderSourceSettingError naming the variable to set (both set is an error too: which one was meant?). */
export function localOrderApiToken(env: Env): string {
  const { token: tokenVar, tokenFile: fileVar } = ORDER_SOURCE_VARS;
  const direct = env[tokenVar]?.trim() || undefined;
  const file = env[fileVar]?.trim() || undefined;
  if (direct !== undefined && file !== undefined)
    throw new OrderSourceSettingError(`set ${tokenVar} or ${fileVar}, not both`);
  if (direct !== undefined) return direct;
  if (file === undefined)
    throw new OrderSourceSettingError(
      `ORDER_SOURCE=http needs the order API's token: set ${tokenVar}, or ${fileVar} to a file whose first line is the token`,
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
