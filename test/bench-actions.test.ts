import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { describe, expect, it } from 'vitest';
import { formatActions } from '../bench/actions-report';
import { ACTIONS_SCALES, historyActions, sumCounts, type ActionsResult } from '../bench/actions-result';
import { parseBenchArgs } from '../bench/options';

/**
 * `npm run bench -- --only actions` kept honest where it can be without a server of its
 * own: the rules it counts a history's billable actions by, on the recorded golden
 * histories, and its report. The metered run itself needs a dev server started with
 * `--metrics-port`, which the suite's shared server is not (other files' actions would mix
 * into its counter); `npm run bench -- --only actions --smoke` runs it in half a minute.
 */

const golden = async (name: string) => historyFromJSON(JSON.parse(await readFile(path.join(import.meta.dirname, 'fixtures', 'histories', `${name}.json`), 'utf8'))).events ?? [];

describe('counting a history\'s billable actions', () => {
  it('counts a one-turn session\'s start, activities, timers, upserts and Updates, and nothing for workflow tasks or closes', async () => {
    // normal-turn: one message (send) and `end`, a step asking for two calculator calls, then the answer.
    const counts = historyActions(await golden('normal-turn'));
    expect(counts).toEqual({ start: 1, activity: 4, 'search-attribute upsert': 5, timer: 2, update: 2 });
    expect(sumCounts(counts)).toBe(14);
  });

  it('counts two points over the minimum per turn for a session of revision 2: the status upserts, and one idle timer the second turn did not start again', async () => {
    // revision-2-turns: started with its message and its search attributes; a step asking for two calculator calls, the answer; a second one-step turn; `end`.
    const events = await golden('revision-2-turns');
    const accepted = events.flatMap((e, i) => (e.workflowExecutionUpdateAcceptedEventAttributes ? [i] : []));
    const [first, second] = [events.slice(0, accepted[1]), events.slice(accepted[1], accepted[2])].map(historyActions);
    // Minimum: 1 start, 2 LLM and 2 tool activities, 1 Update; then 1 LLM activity, 1 Update.
    expect(first).toEqual({ start: 1, activity: 4, update: 1, 'search-attribute upsert': 1, timer: 1 });
    expect(second).toEqual({ activity: 1, update: 1, 'search-attribute upsert': 2 });
  });

  it('counts each retry of an activity, which history records only as the attempt that closed it', async () => {
    // retries: one LLM call answered on its third attempt.
    expect(historyActions(await golden('retries'))).toMatchObject({ activity: 1, 'activity retry': 2 });
  });
});

describe('the actions benchmark\'s options and report', () => {
  it('reads --only actions at every scale', () => {
    expect(parseBenchArgs(['--only', 'actions', '--smoke']).only).toBe('actions');
    for (const scale of Object.values(ACTIONS_SCALES)) expect(scale.steps).toBeGreaterThanOrEqual(2);
  });

  it('reports the session beside its minimum, the idle hour and each client read', () => {
    const result: ActionsResult = {
      settings: ACTIONS_SCALES.smoke,
      session: {
        metered: { command_ScheduleActivityTask: 9, command_UpsertWorkflowSearchAttributes: 4, command_StartTimer: 1, grpc_ExecuteMultiOperation: 1, message_UpdateWorkflowExecution_Acceptance: 1 },
        meteredTotal: 16,
        fromHistory: { activity: 9, 'search-attribute upsert': 4, start: 1, update: 1, timer: 1 },
        historyTotal: 16,
        llmCalls: 3,
        toolCalls: 6,
        minimum: 11,
        laterTurn: { metered: { command_ScheduleActivityTask: 9, command_UpsertWorkflowSearchAttributes: 2, message_UpdateWorkflowExecution_Acceptance: 1 }, meteredTotal: 12, minimum: 10 },
        endMetered: { message_UpdateWorkflowExecution_Acceptance: 1 },
      },
      meteredTotals: [16],
      idle: { seconds: 2, metered: {}, perHour: 0 },
      streaming: { seconds: 3, metered: { command_ScheduleActivityTask: 1, grpc_RecordActivityTaskHeartbeat: 1 }, heartbeatsPerMinute: 20, watch: { seconds: 4, queries: 9 } },
      client: { state: { grpc_QueryWorkflow: 1 }, log: { grpc_QueryWorkflow: 3 }, list: {} },
      durationS: 31,
    };
    const text = formatActions(result);
    expect(text).toContain('Minimum 11 (1 start, 3 LLM activities, 6 tool activities, 1 Update): metered 16 (+5), from history 16 (+5).');
    expect(text).toMatch(/command_UpsertWorkflowSearchAttributes\s+4/);
    expect(text).toContain('A later turn in the same session: metered 12 against a minimum of 10 (+2): 9 command_ScheduleActivityTask, 2 command_UpsertWorkflowSearchAttributes, 1 message_UpdateWorkflowExecution_Acceptance.');
    expect(text).toContain('Idle for 2 s: none (0 an hour).');
    expect(text).toContain('20 heartbeats a minute of streaming.');
    expect(text).toContain('`watch` following that turn for 4 s, a round every 500 ms: 9 Queries.');
    expect(text).toContain('state 1 grpc_QueryWorkflow; log 3 grpc_QueryWorkflow; list none.');
  });
});
