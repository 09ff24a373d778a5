import type { InjectedSinks } from '@temporalio/worker';
import { LIVE_STREAM_VERSION, type LiveStreamPublisher, type ProgressFrame } from '../contracts/live-stream';
import { statusLine } from '../contracts/live-progress-lines';
import type { SessionLogSinks } from '../contracts/session-log-sinks';
import type { SessionEvent } from '../contracts/session-log';
import type { SessionStatusSinks, SessionStatusUpdate } from '../contracts/session-status-sinks';
import { logFramesOf } from '../streaming/log-frames';

/**
 * The log sink (the worker's copy, activities/llm/session-log-cache.ts) with each mirrored
 * event also published as a log frame, and the status sink published as progress frames:
 * what a gateway shows of a session between its reads of the log. The copy is fed first,
 * as it was; a publisher never throws, so the copy is never harmed by the stream. Without
 * a publisher the status sink is still there (the workflow calls it), and says nothing.
 */
export function liveSessionSinks(logSinks: InjectedSinks<SessionLogSinks>, live: LiveStreamPublisher | undefined): InjectedSinks<SessionLogSinks & SessionStatusSinks> {
  const { opened, appended, closed } = logSinks.sessionLog;
  const publishLog = (sessionId: string, events: readonly SessionEvent[]) => {
    for (const frame of logFramesOf(sessionId, events)) live?.publish(frame);
  };
  return {
    sessionLog: {
      opened: {
        fn: (info, settings, events) => {
          void opened.fn(info, settings, events);
          publishLog(info.workflowId, events);
        },
      },
      appended: {
        fn: (info, events) => {
          void appended.fn(info, events);
          publishLog(info.workflowId, events);
        },
      },
      closed,
    },
    sessionStatus: {
      changed: { fn: (info, update) => live?.publish(progressFrameOf(info.workflowId, update)) },
    },
  };
}

export function progressFrameOf(sessionId: string, update: SessionStatusUpdate): ProgressFrame {
  const base: ProgressFrame = { kind: 'progress', v: LIVE_STREAM_VERSION, sessionId, turn: update.turn, step: update.step, state: update.kind, line: statusLine(update) };
  switch (update.kind) {
    case 'approval_waiting':
      return { ...base, callId: update.callId, toolName: update.toolName };
    case 'approval_decided':
      return { ...base, callId: update.callId, toolName: update.toolName, outcome: update.outcome };
    case 'budget':
    case 'turn_idle': {
      const { spend, budget } = update;
      return {
        ...base,
        spend: { costUsd: spend.costUsd, inputTokens: spend.inputTokens, outputTokens: spend.outputTokens },
        budget: { maxUsd: budget.usd ?? null, maxTokens: budget.tokens ?? null, ...(budget.warnAt === undefined ? {} : { warnAt: budget.warnAt }) },
      };
    }
  }
}
