// What an order source declares (docs/orders.md#adding-an-order-source), as plain data free of SST: its name, its
// settings (variables, validated the same way at `sst deploy`, in the functions and locally) and its secrets (the
// SST secret on AWS, the variable or file locally). infra/ deploys from it, the functions that read orders
// (ORDER_READERS) get its settings and links; how it reads an order is its adapter's, bound by name in
// functions/composition/order-sources.ts.

/** A plain setting, read from the environment and validated: an http(s) URL (required), or a bounded integer. */
export type OrderSourceSetting =
  | {
      readonly kind: "url";
      readonly env: string;
      readonly description: string;
      /** Why it is needed, in the error when it is missing. */
      readonly missing: string;
    }
  | {
      readonly kind: "int";
      readonly env: string;
      readonly description: string;
      readonly limits: { readonly default: number; readonly min: number; readonly max: number };
    };

/** A secret of the source: on AWS an SST secret linked to ORDER_READERS; locally a variable or the first line of a file. */
export interface OrderSourceSecret {
  /** The SST secret's name, which is also its link (`Resource.<link>`). */
  readonly link: string;
  /** The variable that holds it locally. */
  readonly env: string;
  /** The variable naming a file whose first line holds it instead (never the command line: `ps` shows it). */
  readonly fileEnv?: string;
  /** What it is, in the words of an error naming it ("the order API's token"). */
  readonly description: string;
}

/** One order source. */
export interface OrderSourceDeclaration {
  /** The value of ORDER_SOURCE. */
  readonly name: string;
  /** Where its orders come from, for the sources' table of docs/orders.md. */
  readonly description: string;
  /** The adapter that reads its orders (the docs' table names it). */
  readonly adapter: `adapters/${string}.ts`;
  readonly settings: Readonly<Record<string, OrderSourceSetting>>;
  readonly secrets: Readonly<Record<string, OrderSourceSecret>>;
}
