import { defineRoute } from "../../http/route.ts";
import { CodeSent, Refresh, RequestCode, TokenSet, Verify } from "./schemas.ts";
import { refresh, requestCode, verifyCode } from "./service.ts";

export const authRoutes = [
  defineRoute({
    method: "POST",
    path: "/v1/auth/otp",
    tag: "Auth",
    summary: "E-mail a single-use sign-in code (a new e-mail creates the user)",
    auth: "none",
    errors: ["rate_limited"],
    body: RequestCode,
    response: CodeSent,
    handler: ({ services, body, ip }) => requestCode(services, body, ip),
  }),
  defineRoute({
    method: "POST",
    path: "/v1/auth/verify",
    tag: "Auth",
    summary: "Exchange the e-mail and code for a token set",
    auth: "none",
    errors: ["invalid_request", "unauthorized", "rate_limited"],
    body: Verify,
    response: TokenSet,
    handler: ({ services, body, ip }) => verifyCode(services, body, ip),
  }),
  defineRoute({
    method: "POST",
    path: "/v1/auth/refresh",
    tag: "Auth",
    summary: "Rotate the refresh token and get a new access token",
    auth: "none",
    errors: ["unauthorized"],
    body: Refresh,
    response: TokenSet,
    handler: ({ services, body }) => refresh(services, body),
  }),
];
