// Types of sign-webhook.mjs.
/** The Stripe-Signature header of `body` signed at `t` (unix seconds) with `secret`. */
export declare function stripeSignature(body: string, secret: string, t: number): string;
