import { execFileSync } from 'node:child_process';

/** A received message as Python's `email` package reads it with `email.policy.default`. */
export type PythonParsedMail = {
  /** The names of every header, in order, as written. */
  names: string[];
  subject: string;
  /** Reply-To's mailboxes: display name and address. */
  replyTo: Array<{ name: string; address: string }>;
  /** Defects the parser found in Subject or Reply-To. */
  defects: string[];
};

const READ = `
import sys, json, email, email.policy
m = email.message_from_bytes(sys.stdin.buffer.read(), policy=email.policy.default)
rt = m['reply-to']
print(json.dumps({
  'names': m.keys(),
  'subject': str(m['subject']),
  'replyTo': [{'name': a.display_name, 'address': a.addr_spec} for a in rt.addresses] if rt is not None else [],
  'defects': [type(d).__name__ for h in ('subject', 'reply-to') if m[h] is not None for d in m[h].defects],
}))
`;

/**
 * Parses a raw message with Python 3's standard library, a real mail parser that decodes
 * encoded words as mail programs do, so a test never trusts the sender to read its own output.
 */
export function parseWithPython(raw: string): PythonParsedMail {
  return JSON.parse(execFileSync('python3', ['-c', READ], { input: raw, encoding: 'utf8' })) as PythonParsedMail;
}
