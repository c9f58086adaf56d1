import { type } from "arktype";

// docs/api.md#sign-in. Formats (e-mail shape, 6-8 digit code) are checked by the service, because a malformed
// value on verify is 400 `invalid_request` (docs/api.md#sign-in), not a schema `validation_error`.

export const RequestCode = type({ "+": "reject", email: "string" });
export type RequestCode = typeof RequestCode.infer;

export const Verify = type({ "+": "reject", email: "string", code: "string" });
export type Verify = typeof Verify.infer;

export const Refresh = type({ "+": "reject", refresh_token: "string" });
export type Refresh = typeof Refresh.infer;

export const CodeSent = type({ message: "string" });
export type CodeSent = typeof CodeSent.infer;

/** docs/api.md#sign-in. */
export const TokenSet = type({
  access_token: "string",
  refresh_token: "string",
  expires_in: "number.integer",
  token_type: "'bearer'",
});
export type TokenSet = typeof TokenSet.infer;
