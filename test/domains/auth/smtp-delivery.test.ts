// Real e-mail delivery end to end: the service (a real process) talks SMTP to an smtp-server
// listening on loopback, and the code in the received message signs the user in.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { SMTPServer } from "smtp-server";
import { createLogger } from "../../../src/shared/log.ts";
import { createTestApp, eventually, startProcess } from "../../harness.ts";
import { codeIn, type TokenSetBody } from "./helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

type Received = { from: string; to: string[]; user: string | undefined; raw: string };

/** An SMTP server that accepts user `vecsync` / `s3cret` without TLS and keeps every message. */
async function receivingServer(): Promise<{ port: number; messages: Received[] } & AsyncDisposable> {
  const messages: Received[] = [];
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === "vecsync" && auth.password === "s3cret") callback(null, { user: auth.username });
      else callback(new Error("invalid credentials"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        messages.push({ from, to: session.envelope.rcptTo.map((r) => r.address), user: session.user as string | undefined, raw: Buffer.concat(chunks).toString("utf8") });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, messages, [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Header value and decoded body of a simple text/plain message (7bit or quoted-printable). */
function parseMessage(raw: string) {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, " ");
  const header = (name: string) => head.match(new RegExp(`^${name}:\\s*(.*)$`, "im"))?.[1]?.trim();
  let body = raw.slice(split + 4);
  if (/quoted-printable/i.test(header("Content-Transfer-Encoding") ?? "")) {
    body = body.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  return { subject: header("Subject"), contentType: header("Content-Type"), body };
}

describe("happy", () => {
  test("the code arrives over SMTP with a sane subject, and signs the user in", async () => {
    await using smtp = await receivingServer();
    await using service = await startProcess({ env: { VECSYNC_SMTP_URL: `smtp://vecsync:s3cret@127.0.0.1:${smtp.port}` } });
    const post = (path: string, body: unknown) => fetch(`${service.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

    expect((await post("/v1/auth/otp", { email: "Smtp.User@Example.com" })).status).toBe(200);
    const [message] = await eventually(() => (smtp.messages.length ? smtp.messages : null), 10_000);
    expect(message!.to).toEqual(["smtp.user@example.com"]);
    expect(message!.user).toBe("vecsync");
    const mail = parseMessage(message!.raw);
    expect(mail.subject).toBe("Your vecsync sign-in code");
    expect(mail.contentType).toMatch(/^text\/plain/);
    const code = codeIn(mail.body);
    expect(mail.body).toContain(`Your vecsync sign-in code is ${code}`);

    const res = await post("/v1/auth/verify", { email: "smtp.user@example.com", code });
    expect(res.status).toBe(200);
    expect(((await res.json()) as TokenSetBody).token_type).toBe("bearer");
  });

  test("with SMTP configured the code is not logged", async () => {
    await using smtp = await receivingServer();
    await using app = await createTestApp({ env: { VECSYNC_SMTP_URL: `smtp://vecsync:s3cret@127.0.0.1:${smtp.port}` } });
    const lines: string[] = [];
    app.services.logger = createLogger("debug", new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    await app.request("POST", "/v1/auth/otp", { body: { email: "quiet@example.com" } });
    const [message] = await eventually(() => (smtp.messages.length ? smtp.messages : null), 10_000);
    const code = codeIn(parseMessage(message!.raw).body);
    expect(app.config.mailOutbox).toBeNull();
    expect(lines.join("")).not.toContain(code);
  });
});
