import { randomUUID } from "node:crypto";

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's own `x-request-id` is kept when it is safe to echo and log; otherwise we mint one. */
export function requestIdFor(headers: Headers): string {
  const given = headers.get("x-request-id");
  return given && SAFE_ID.test(given) ? given : randomUUID();
}
