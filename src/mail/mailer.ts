import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import nodemailer from "nodemailer";
import type { Logger } from "../shared/log.ts";

export type Mail = { to: string; subject: string; text: string };

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

const FROM = "vecsync <no-reply@vecsync.local>";

/** Appends each e-mail as one JSON line (docs/running.md#e-mail: `VECSYNC_MAIL_OUTBOX`). */
export function outboxMailer(path: string): Mailer {
  mkdirSync(dirname(path), { recursive: true });
  return {
    async send(mail) {
      appendFileSync(path, JSON.stringify({ to: mail.to, subject: mail.subject, text: mail.text, sent_at: new Date().toISOString() }) + "\n", { mode: 0o600 });
    },
  };
}

/** Real delivery over SMTP (`VECSYNC_SMTP_URL`). */
export function smtpMailer(url: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    async send(mail) {
      await transport.sendMail({ from: FROM, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}

/** Delivers over SMTP and/or to the outbox, as configured (config defaults the outbox when SMTP is unset). */
export function createMailer(opts: { smtpUrl: string | null; outbox: string | null; logger: Logger }): Mailer {
  const sinks = [opts.smtpUrl ? smtpMailer(opts.smtpUrl) : null, opts.outbox ? outboxMailer(opts.outbox) : null].filter((m): m is Mailer => m !== null);
  return {
    async send(mail) {
      await Promise.all(sinks.map((s) => s.send(mail)));
      opts.logger.info({ to: mail.to, subject: mail.subject }, "mail sent");
    },
  };
}
