/**
 * `npm run gateway`: the HTTP gateway in front of the client library (docs/gateway.md),
 * configured by the environment, until SIGINT or SIGTERM.
 */
import { ConfigError } from '../config/config-error';
import { ServerUnreachableError } from '../client/errors';
import { runGateway } from './serve';

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());

runGateway(process.env, { signal: stop.signal, log: (line) => console.log(line) }).then(
  () => process.exit(0),
  (error: unknown) => {
    // A mistake of configuration is one line naming the variable; anything else keeps its stack.
    const oneLine = error instanceof ConfigError || error instanceof ServerUnreachableError;
    console.error(oneLine ? `gateway: ${(error as Error).message}` : error);
    process.exit(1);
  },
);
