// Sign-in test helpers: read codes back from the JSON-lines outbox the service writes when no
// SMTP server is configured (docs/running.md#e-mail), and run the whole otp → verify flow.
import { existsSync, readFileSync } from "node:fs";
import { createHttpApp } from "../../../src/server.ts";
import { eventually, type TestApp } from "../../harness.ts";

export type OutboxMail = { to: string; subject: string; text: string; sent_at: string };

export function outbox(path: string): OutboxMail[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as OutboxMail);
}

export function codeIn(text: string): string {
  const match = text.match(/\b(\d{6})\b/);
  if (!match) throw new Error(`no code in mail: ${text}`);
  return match[1]!;
}

/** The code of the latest mail sent to `email`. */
export function latestCode(outboxPath: string, email: string): string {
  const mail = outbox(outboxPath).filter((m) => m.to === email).at(-1);
  if (!mail) throw new Error(`no mail to ${email}`);
  return codeIn(mail.text);
}

/** Codes are delivered after the otp answer (it must not reveal whether the e-mail is known). */
export function mailsTo(outboxPath: string, email: string, count: number): Promise<OutboxMail[]> {
  return eventually(() => {
    const mails = outbox(outboxPath).filter((m) => m.to === email);
    return mails.length >= count ? mails : null;
  }, 5_000, 5);
}

export type TokenSetBody = { access_token: string; refresh_token: string; expires_in: number; token_type: string };

export async function requestCode(app: TestApp, email: string): Promise<string> {
  const to = email.toLowerCase();
  const before = outbox(app.config.mailOutbox!).filter((m) => m.to === to).length;
  const res = await app.request("POST", "/v1/auth/otp", { body: { email } });
  if (res.status !== 200) throw new Error(`otp answered ${res.status}: ${await res.text()}`);
  const mails = await mailsTo(app.config.mailOutbox!, to, before + 1);
  return codeIn(mails.at(-1)!.text);
}

export async function signIn(app: TestApp, email: string): Promise<TokenSetBody> {
  const code = await requestCode(app, email);
  const res = await app.request("POST", "/v1/auth/verify", { body: { email, code } });
  if (res.status !== 200) throw new Error(`verify answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as TokenSetBody;
}

/** The in-process app on a real loopback socket, so requests carry a client IP. */
export function listenOnLoopback(app: TestApp): { url: string } & AsyncDisposable {
  const http = createHttpApp(app.services).listen({ hostname: "127.0.0.1", port: 0 });
  return {
    url: `http://127.0.0.1:${http.server!.port}`,
    async [Symbol.asyncDispose]() {
      await http.stop(true);
    },
  };
}

export const errorCode = async (res: Response): Promise<string> => ((await res.json()) as { error: { code: string } }).error.code;
