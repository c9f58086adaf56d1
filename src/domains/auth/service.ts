import type { Services } from "../../services.ts";
import { AppError, validationError } from "../../shared/errors.ts";
import { CODE_TTL_MS, generateCode, hashCode, isWellFormedCode, MAX_TRIES_PER_CODE, normalizeEmail, sameDigest } from "./otp.ts";
import { giveBack, take, type Limit } from "./rate-limit.ts";
import * as repo from "./repo.ts";
import type { CodeSent, Refresh, RequestCode, TokenSet, Verify } from "./schemas.ts";
import { refreshSession, startSession } from "./tokens.ts";

export { cleanupExpiredAuth } from "./cleanup.ts";

// docs/security.md#sign-in-limits. Windows slide over `rate_events`; a refused request is not counted, so
// a client that keeps knocking is not locked out for longer than the window.
const OTP_WINDOW_MS = 15 * 60 * 1000;
const OTP_PER_EMAIL = 5;
const WRONG_TRIES_PER_DAY = 30; // per e-mail, not reset by new codes
const DAY_MS = 24 * 60 * 60 * 1000;
// Per client IP, so that guessing spread over many e-mails (each under its own daily limit) is
// bounded too: 60 an hour is far above any person mistyping, far below a useful brute force.
const WRONG_TRIES_PER_IP_HOUR = 60;
const HOUR_MS = 60 * 60 * 1000;

// One answer whether or not the e-mail was known (docs/api.md#sign-in): a new e-mail simply gets an account.
const CODE_SENT_MESSAGE = "A sign-in code has been sent to the e-mail address; it is valid for 10 minutes";

const wrongCode = () => new AppError("unauthorized", "The code is invalid or expired");

function codeMail(email: string, code: string) {
  return {
    to: email,
    subject: "Your vecsync sign-in code",
    text: `Your vecsync sign-in code is ${code}\n\nIt is valid for 10 minutes and can be used once. If you did not ask to sign in, you can ignore this e-mail.\n`,
  };
}

/** POST /v1/auth/otp: e-mails a fresh code (creating the user on first sight). */
export async function requestCode(services: Services, input: RequestCode, ip: string | null): Promise<CodeSent> {
  const email = normalizeEmail(input.email);
  if (!email) throw validationError([{ path: "email", message: "must be an e-mail address" }]);
  const now = services.clock.now();
  const message = "Too many sign-in codes requested; try again later";
  const limits: Limit[] = [{ key: `otp:email:${email}`, limit: OTP_PER_EMAIL, windowMs: OTP_WINDOW_MS, message }];
  // In-process calls (tests) have no client address; every socket request has one.
  if (ip) limits.push({ key: `otp:ip:${ip}`, limit: services.config.otpIpLimit, windowMs: OTP_WINDOW_MS, message });
  await take(services.database.db, limits, now);

  // Whatever depends on the e-mail being known (creating the user, insert vs update of the code)
  // runs after the answer, so neither its body nor its timing can tell (docs/api.md#sign-in). A delivery
  // failure is logged; the person asks for another code.
  inOrder(services, email, () => deliverCode(services, email, now).catch((err) => services.logger.error({ err, to: email }, "sign-in code delivery failed")));
  return { message: CODE_SENT_MESSAGE };
}

// Deliveries for one e-mail run one after another, so the code stored last is the one mailed last.
const deliveries = new WeakMap<Services, Map<string, Promise<void>>>();

function inOrder(services: Services, email: string, work: () => Promise<void>): void {
  let queue = deliveries.get(services);
  if (!queue) deliveries.set(services, (queue = new Map()));
  const next = (queue.get(email) ?? Promise.resolve()).then(work);
  queue.set(email, next);
  void next.then(() => {
    if (queue.get(email) === next) queue.delete(email);
  });
}

async function deliverCode(services: Services, email: string, now: Date): Promise<void> {
  const code = generateCode();
  await repo.storeCode(services.database.db, email, hashCode(services.config.masterKey, email, code), new Date(now.getTime() + CODE_TTL_MS), now);
  await services.mailer.send(codeMail(email, code));
  // docs/running.md#e-mail: without SMTP the code is also logged. In the message, because the logger redacts
  // any field named `code`.
  if (!services.config.smtpUrl) services.logger.info({ to: email }, `sign-in code for ${email}: ${code} (no SMTP configured)`);
}

/**
 * POST /v1/auth/verify: a correct, live code signs the user in and is used up. Every try counts as
 * wrong until it proves right: the e-mail's and the address's windows are taken before the code
 * is looked at (and given back on success), and the code's own try is claimed in the same write
 * that checks it is live, so a burst can never test more codes than the limits allow.
 */
export async function verifyCode(services: Services, input: Verify, ip: string | null): Promise<TokenSet> {
  const email = normalizeEmail(input.email);
  if (!email) throw new AppError("invalid_request", "The e-mail address is malformed");
  if (!isWellFormedCode(input.code)) throw new AppError("invalid_request", "The code must be 6 to 8 digits");
  const db = services.database.db;
  const now = services.clock.now();
  const limits: Limit[] = [{ key: `verify_fail:${email}`, limit: WRONG_TRIES_PER_DAY, windowMs: DAY_MS, message: "Too many wrong codes for this e-mail today; try again later" }];
  // In-process calls (tests) have no client address; every socket request has one.
  if (ip) limits.push({ key: `verify_fail:ip:${ip}`, limit: WRONG_TRIES_PER_IP_HOUR, windowMs: HOUR_MS, message: "Too many wrong codes from this address; try again later" });
  const taken = await take(db, limits, now);

  const tried = await repo.claimTry(db, email, now, MAX_TRIES_PER_CODE);
  if (!tried) {
    await repo.deleteDeadCode(db, email, now, MAX_TRIES_PER_CODE);
    throw wrongCode();
  }
  if (!sameDigest(tried.codeHash, hashCode(services.config.masterKey, email, input.code))) {
    if (tried.tries >= MAX_TRIES_PER_CODE) await repo.deleteCode(db, email, tried.codeHash);
    throw wrongCode();
  }
  if (!(await repo.consumeCode(db, email, tried.codeHash))) throw wrongCode();
  await giveBack(db, taken);
  // The user was created with the code; recreate it only if it was deleted since.
  let user = await repo.findUserByEmail(db, email);
  if (!user) {
    await repo.ensureUser(db, email, now);
    user = await repo.findUserByEmail(db, email);
    if (!user) throw wrongCode();
  }
  return startSession(services, { userId: user.id, email: user.email });
}

/** POST /v1/auth/refresh. */
export function refresh(services: Services, input: Refresh): Promise<TokenSet> {
  return refreshSession(services, input.refresh_token);
}
