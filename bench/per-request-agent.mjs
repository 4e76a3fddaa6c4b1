// Preload (`node --import ./bench/per-request-agent.mjs`) that gives the Mailchimp client back
// its own behaviour, a new agent and connection per request, by making superagent's
// `.agent()` a no-op: the "before" of bench/newsletter-memory.ts.
import { createRequire } from 'node:module';

const { Request } = createRequire(import.meta.url)('superagent');
Request.prototype.agent = function () {
  return this;
};
