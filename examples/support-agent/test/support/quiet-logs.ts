import { DefaultLogger, Runtime } from '@temporalio/worker';

/** The workers' warnings and errors only: their INFO lines (each bundle, each state change) would bury the tests' own output. */
export function quietLogs(): void {
  Runtime.install({ logger: new DefaultLogger('WARN') });
}
