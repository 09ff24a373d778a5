/**
 * `npm run install-binaries`: installs the pinned Temporal CLI, test server and NATS server into
 * `.temporal/` (or checks the ones named by TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH / NATS_SERVER_PATH)
 * and prints where they are. Safe to run again: a second run only checks.
 */
import { installTemporalBinaries, NATS_SERVER, natsServerPath, TEMPORAL_CLI, TEMPORAL_TEST_SERVER } from '../harness/temporal-binaries';

try {
  const [{ cli, testServer }, nats] = await Promise.all([installTemporalBinaries(), natsServerPath()]);
  console.log(`${TEMPORAL_CLI.executable}: ${cli}`);
  console.log(`${TEMPORAL_TEST_SERVER.executable}: ${testServer}`);
  console.log(`${NATS_SERVER.executable}: ${nats}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
