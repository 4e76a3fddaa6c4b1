// The mail server's settings, as src/lib/config/smtp.ts reads them from SMTP_URL and the rest:
// the mail's own type, so that nothing that sends mail depends on the configuration module.

/** How the mail server's certificate is checked: against Node's CAs plus `ca`, or (`rejectUnauthorized: false`) not at all. */
export type SmtpTls = {
  /** The certificates of SMTP_TLS_CA_FILE, trusted besides Node's own CAs. */
  ca?: string[];
  /** Where they came from, for the start-up log. */
  caFile?: string;
  /** False only when SMTP_TLS_REJECT_UNAUTHORIZED=false. */
  rejectUnauthorized?: boolean;
};

/** SMTP delivery of contact messages, or `undefined` when messages are only stored. */
export type SmtpConfig = { url: string; to: string; from: string; tls?: SmtpTls };
