// The Content-Security-Policy of each page: its one inline script and one inline stylesheet are allowed by
// their SHA-256 hash (they are constants), and nothing else may load — no other script, style, image, font,
// frame or form target. The review page may also call the API on its own origin.
import { hashHex } from "../core/crew/hash.ts";

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Base64 of the bytes a hex string spells. */
function hexToBase64(hex: string): string {
  const bytes = hex.match(/../g)!.map((h) => parseInt(h, 16));
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const [a, b, c] = [bytes[i]!, bytes[i + 1], bytes[i + 2]];
    const n = (a << 16) | ((b ?? 0) << 8) | (c ?? 0);
    out +=
      B64[(n >> 18) & 63]! +
      B64[(n >> 12) & 63]! +
      (b === undefined ? "=" : B64[(n >> 6) & 63]!) +
      (c === undefined ? "=" : B64[n & 63]!);
  }
  return out;
}

/** A CSP hash source (`'sha256-…'`) for an inline script or style with exactly this text. */
function cspHash(text: string): string {
  return `'sha256-${hexToBase64(hashHex(text))}'`;
}

/** A policy that allows exactly `script` and `style` inline (plus `connect-src 'self'` when the page calls the API). */
export function cspFor(page: { script: string; style: string; connect?: boolean }): string {
  return [
    "default-src 'none'",
    `script-src ${cspHash(page.script)}`,
    `style-src ${cspHash(page.style)}`,
    `connect-src ${page.connect ? "'self'" : "'none'"}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The headers every HTML page is served with: its policy, no MIME sniffing, no referrer, not cached. */
export function htmlSecurityHeaders(csp: string): Record<string, string> {
  return {
    "content-security-policy": csp,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  };
}
