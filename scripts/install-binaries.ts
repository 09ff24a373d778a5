/**
 * `npm run install-binaries`: installs the pinned Temporal CLI and test server into
 * `.temporal/` (or checks the ones named by TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH)
 * and prints where they are. Safe to run again: a second run only checks.
 */
import { installTemporalBinaries, TEMPORAL_CLI, TEMPORAL_TEST_SERVER } from '../harness/temporal-binaries';

try {
  const { cli, testServer } = await installTemporalBinaries();
  console.log(`${TEMPORAL_CLI.executable}: ${cli}`);
  console.log(`${TEMPORAL_TEST_SERVER.executable}: ${testServer}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
