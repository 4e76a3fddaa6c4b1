/**
 * The local newsletter list on the command line: `npm run subscribers -- export --format
 * csv|json`, the signups waiting for the provider (`waiting`, `retry <id>`), and the erasure of
 * an address (`erase <email>`). It opens the same store as the server, which may be running.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXIT } from '../lib/cli.ts';
import { redis as redisConfig } from '../lib/config/redis.ts';
import { createLogger } from '../lib/log.ts';
import { eraseSubscriber } from '../lib/newsletter/erasure.ts';
import { createSignups } from '../lib/newsletter/signups.ts';
import { parseSubscribersArgs, runSubscribersCommand, SUBSCRIBERS_USAGE } from '../lib/newsletter/subscribers.ts';
import { forgetAddressInRedis } from '../lib/rate-limit.ts';
import { connectRedis } from '../lib/redis.ts';
import { runTool } from './run.ts';

/** How long `erase` waits for Redis to answer before saying it could not reach it. */
const REDIS_WAIT_MS = 3_000;

await runTool({
  usage: SUBSCRIBERS_USAGE,
  parse: parseSubscribersArgs,
  async run(command, { store, out, err }) {
    const io = { subscribers: store.subscribers, signups: createSignups(store.sql), out, err };
    if (command.name !== 'erase') return runSubscribersCommand(command, io);
    // The erasure reaches the server's per-address counts in Redis (REDIS_URL), as the admin's does.
    const { config, problems } = redisConfig.read(process.env);
    if (problems.length > 0) {
      err(`${problems.join('\n')}\n`);
      return EXIT.usage;
    }
    const url = config.redisUrl;
    const redis = url ? connectRedis(url, createLogger({ level: 'silent' })) : undefined;
    const limits = redis && {
      async forgetAddress(email: string) {
        // A client of its own, just started: it answers once connected (or throws, said by the erasure).
        if (redis.status !== 'ready') await Promise.race([once(redis, 'ready'), sleep(REDIS_WAIT_MS, undefined, { ref: false })]);
        return forgetAddressInRedis(redis, email);
      },
    };
    try {
      return await runSubscribersCommand(command, { ...io, erase: (email) => eraseSubscriber({ sql: store.sql, limits }, email) });
    } finally {
      redis?.disconnect();
    }
  },
});
