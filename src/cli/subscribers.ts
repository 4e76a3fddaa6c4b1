/**
 * The local newsletter list on the command line: `npm run subscribers -- export --format
 * csv|json`, and the signups waiting for the provider (`waiting`, `retry <id>`). It opens the same store as the server, which may be running.
 */
import { parseSubscribersArgs, runSubscribersCommand, SUBSCRIBERS_USAGE } from '../lib/newsletter/subscribers.ts';
import { createSignups } from '../lib/newsletter/signups.ts';
import { runTool } from './run.ts';

await runTool({
  usage: SUBSCRIBERS_USAGE,
  parse: parseSubscribersArgs,
  run: (command, { store, out, err }) => runSubscribersCommand(command, { subscribers: store.subscribers, signups: createSignups(store.sql), out, err }),
});
