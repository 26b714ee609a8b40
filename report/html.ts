// A tiny HTML builder whose template tag escapes every interpolated value unless it is already SafeHtml.

/** A fragment of HTML that is known to be safe (built by `html` or from constants). */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for HTML element content and quoted attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function part(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(part).join("");
  return escapeHtml(typeof value === "string" ? value : String(value));
}

/** Template tag: literal parts are trusted, interpolations are escaped (arrays joined, null/undefined/false dropped). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((v, i) => {
    out += part(v) + (strings[i + 1] ?? "");
  });
  return new SafeHtml(out);
}

/** Marks a constant string (CSS, a fixed script) as safe; never pass data from events here. */
export function trusted(constant: string): SafeHtml {
  return new SafeHtml(constant);
}

/** A value as pretty JSON, for `<pre>` blocks (escaped by `html` when interpolated). */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}
