import { createRoute, z } from '@hono/zod-openapi';
import { stateQuery } from '../../contracts/api';
import { DEFAULT_RETRY_POLICY, RetryPolicySchema } from '../../contracts/retry-policy';
import type { agentSession } from '../../workflows/session';
import { decideApproval } from '../../client/approvals';
import { setBudget } from '../../client/budget';
import { requestEnd } from '../../client/end-session';
import { listSessions } from '../../client/list-sessions';
import { readSessionLog } from '../../client/log-chain';
import { setRetryPolicy } from '../../client/retry-policy';
import { showSession } from '../../client/session-view';
import { forkSession, sendAndWait, startSession, startSessionWithMessage, uiLink, type SessionHandle, type StartOptions } from '../../client/sessions';
import { cancelTurn, sendMessage, turnMessages } from '../../client/turn-control';
import { assertMayApprove, assertMayStart, mayUseAgent } from '../auth';
import type { GatewayContext, GatewayKey, RouteModule } from '../context';
import { ErrorBodySchema, GatewayError, invalidInput } from '../errors';
import {
  AGENT_DEFINING_SETTINGS,
  ApprovalBodySchema,
  ApprovalParamsSchema,
  ApprovalResultSchema,
  BudgetResultSchema,
  BudgetUpdateBodySchema,
  CancelledSchema,
  CreateSessionSchema,
  EndedSchema,
  ForkBodySchema,
  ListQuerySchema,
  LogPageSchema,
  LogQuerySchema,
  RetryPolicyBodySchema,
  RetryPolicyResultSchema,
  SendSchema,
  SentSchema,
  SessionCreatedSchema,
  SessionParamsSchema,
  SessionStateSchema,
  SessionSummarySchema,
  TurnResultSchema,
  type CreateSession,
} from './session-schemas';

/**
 * The session routes: each a thin call of the client library (client/), which the CLI
 * runs too, after the key's check. Bodies are the contracts' schemas (session-schemas.ts).
 */

const json = <S extends z.ZodType>(schema: S, description: string) => ({ content: { 'application/json': { schema } }, description });
const body = <S extends z.ZodType>(schema: S) => ({ body: { content: { 'application/json': { schema } }, required: true } });
const errors = (...statuses: (400 | 403 | 404 | 409)[]) =>
  Object.fromEntries([401, 429, ...statuses].map((status) => [status, json(ErrorBodySchema, ERROR_WORDS[status] ?? 'refused')])) as Record<400 | 401 | 403 | 404 | 409 | 429, ReturnType<typeof json<typeof ErrorBodySchema>>>;
const ERROR_WORDS: Record<number, string> = {
  400: 'the request names a field that is wrong',
  401: 'no bearer key, or not a valid one',
  403: 'the key may not do this',
  404: 'no such session or agent',
  409: 'the session refused (it is ending or ended, no such call waits)',
  429: "over the key's requests per minute (Retry-After)",
};
const security = [{ bearer: [] }];

export const sessionRoutes: RouteModule = (app, ctx) => {
  const { client, env } = ctx;
  const handleOf = (id: string): SessionHandle => client.workflow.getHandle<typeof agentSession>(id);
  const link = (id: string) => uiLink(env, id);
  const authorized = async (key: GatewayKey, id: string) => {
    await ctx.authorizeSession(key, id);
    return handleOf(id);
  };
  const accepting = serializedPerSession();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sessions',
      tags: ['sessions'],
      summary: 'Start a session, by agent name or from settings, optionally with its first message',
      security,
      request: body(CreateSessionSchema),
      responses: { 201: json(SessionCreatedSchema, 'the session, started'), ...errors(400, 403, 404) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const key = c.get('key');
      assertMayStart(key, input.agent);
      if (key.agents !== '*') {
        const defining = AGENT_DEFINING_SETTINGS.find((name) => input[name] !== undefined);
        if (defining) throw new GatewayError('forbidden', `${defining}: key ${key.id} may start its agents as they are defined; changing ${defining} needs agents "*"`);
      }
      const options = startOptions(input);
      if (input.message === undefined) {
        const handle = await startSession(client, env, options);
        ctx.rememberSession(handle.workflowId, input.agent);
        return c.json({ sessionId: handle.workflowId, runId: handle.firstExecutionRunId, uiUrl: link(handle.workflowId) }, 201);
      }
      const started = await startSessionWithMessage(client, env, options, input.message);
      ctx.rememberSession(started.handle.workflowId, input.agent);
      // A new session's first message is its turn 1.
      return c.json({ sessionId: started.handle.workflowId, runId: started.handle.firstExecutionRunId, uiUrl: link(started.handle.workflowId), turn: 1 }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/sessions',
      tags: ['sessions'],
      summary: "List sessions on the gateway's task queue, open ones first (the CLI's list filters)",
      security,
      request: { query: ListQuerySchema },
      responses: { 200: json(z.object({ sessions: z.array(SessionSummarySchema) }), 'the sessions this key may use'), ...errors(400) },
    }),
    async (c) => {
      const { status, agent, parent, limit } = c.req.valid('query');
      const key = c.get('key');
      const listed = await listSessions(client, { taskQueue: env.AGENT_TASK_QUEUE, limit, ...(status ? { status } : {}), ...(parent === undefined ? {} : { parent }) });
      // Only a key that may use every session, asked for no agent, needs no session's agent.
      const needsAgents = key.agents !== '*' || agent !== undefined;
      const withAgents = await Promise.all(listed.map(async (s) => ({ s, agent: needsAgents ? await agentOrUnknown(ctx, s.workflowId) : undefined })));
      const sessions = withAgents
        .filter(({ agent: a }) => !needsAgents || (a !== undefined && mayUseAgent(key, a ?? undefined) && (agent === undefined || a === agent)))
        .map(({ s, agent: a }) => ({
          sessionId: s.workflowId,
          runId: s.runId,
          status: s.status,
          ...(a === undefined ? {} : { agent: a }),
          model: s.model,
          steps: s.steps,
          costUsd: s.costUsd,
          startTime: s.startTime,
          closeTime: s.closeTime,
          uiUrl: link(s.workflowId),
        }));
      return c.json({ sessions }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/sessions/{id}',
      tags: ['sessions'],
      summary: 'A session’s state: phase, turn, step, waiting approvals, spend against its budget',
      security,
      request: { params: SessionParamsSchema },
      responses: { 200: json(SessionStateSchema, 'the session now'), ...errors(404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const view = await showSession(await authorized(c.get('key'), id), env.modelWindows);
      const { workflowId, ...rest } = view;
      return c.json({ sessionId: workflowId, ...rest, settings: rest.settings as Record<string, unknown> | undefined, uiUrl: link(workflowId) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/sessions/{id}/log',
      tags: ['sessions'],
      summary: 'A page of the session’s log, across its runs',
      security,
      request: { params: SessionParamsSchema, query: LogQuerySchema },
      responses: { 200: json(LogPageSchema, 'the events from fromSeq on, at most limit'), ...errors(400, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { fromSeq, limit } = c.req.valid('query');
      await ctx.authorizeSession(c.get('key'), id);
      const events = await readSessionLog(client.workflow, id, { fromSeq, uptoSeq: fromSeq + limit });
      const last = events.at(-1);
      return c.json({ events, nextFromSeq: last ? last.seq + 1 : fromSeq }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sessions/{id}/messages',
      tags: ['sessions'],
      summary: 'Send a message: 202 once the session accepted it, or 200 with the turn’s result when wait is true',
      security,
      request: { params: SessionParamsSchema, ...body(SendSchema) },
      responses: { 200: json(TurnResultSchema, 'the turn, ended (wait: true)'), 202: json(SentSchema, 'the message, accepted as this turn'), ...errors(400, 404, 409) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { text, outputSchema, wait } = c.req.valid('json');
      const handle = await authorized(c.get('key'), id);
      const options = outputSchema ? { outputSchema } : {};
      if (wait) {
        const fromSeq = (await handle.query(stateQuery)).events;
        const result = await sendAndWait(handle, text, options);
        // A turn that handed the conversation over was answered by the session it went to, whose log holds that turn.
        const events = await readSessionLog(client.workflow, result.answeredBy ?? id, { fromSeq: result.answeredBy ? 0 : fromSeq });
        const messages = result.turn === undefined ? [] : turnMessages(events, result.turn);
        return c.json({ ...result, messages: messages as unknown as Record<string, unknown>[] }, 200);
      }
      // The turn a message gets is known only to the session: read right after it accepted,
      // one send at a time per session here, so two messages through this gateway cannot swap numbers.
      const sent = await accepting(id, async () => {
        const accepted = await sendMessage(handle, text, options);
        const state = await handle.query(stateQuery);
        return { updateId: accepted.updateId, turn: state.turn + state.queued };
      });
      return c.json(sent, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sessions/{id}/cancel',
      tags: ['sessions'],
      summary: 'Cancel the running turn; answers once its tool calls have their compensation results',
      security,
      request: { params: SessionParamsSchema },
      responses: { 200: json(CancelledSchema, 'what was cancelled'), ...errors(404, 409) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      return c.json(await cancelTurn(await authorized(c.get('key'), id)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sessions/{id}/approvals/{callId}',
      tags: ['sessions'],
      summary: 'Approve or deny a waiting tool call, or a budget pause (callId `budget`); needs a key with approve',
      security,
      request: { params: ApprovalParamsSchema, ...body(ApprovalBodySchema) },
      responses: { 200: json(ApprovalResultSchema, 'the decision; applied false when the call was decided already'), ...errors(400, 403, 404, 409) },
    }),
    async (c) => {
      const { id, callId } = c.req.valid('param');
      const { approved, reason } = c.req.valid('json');
      const key = c.get('key');
      assertMayApprove(key);
      const handle = await authorized(key, id);
      return c.json(await decideApproval(handle, { callId, approved, ...(reason === undefined ? {} : { reason }) }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/sessions/{id}/budget',
      tags: ['sessions'],
      summary: 'Change the budget live: a number sets a limit, null removes it',
      security,
      request: { params: SessionParamsSchema, ...body(BudgetUpdateBodySchema) },
      responses: { 200: json(BudgetResultSchema, 'the budget now'), ...errors(400, 404, 409) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { usd, tokens, warn } = c.req.valid('json');
      const handle = await authorized(c.get('key'), id);
      return c.json(await setBudget(handle, { ...(usd === undefined ? {} : { usd }), ...(tokens === undefined ? {} : { tokens }), ...(warn === undefined ? {} : { warnAt: warn }) }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/sessions/{id}/retry-policy',
      tags: ['sessions'],
      summary: 'Change the LLM retry policy live, also for a call retrying now',
      security,
      request: { params: SessionParamsSchema, ...body(RetryPolicyBodySchema) },
      responses: { 200: json(RetryPolicyResultSchema, 'the policy in force; null: one attempt per call'), ...errors(400, 404, 409) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const given = c.req.valid('json');
      const handle = await authorized(c.get('key'), id);
      const { policy, ...fields } = given;
      // As the CLI reads it: off, default, or the fields to change over the default ladder, which together must make a ladder.
      const ladder = RetryPolicySchema.safeParse({ ...DEFAULT_RETRY_POLICY, ...fields });
      if (policy === undefined && !ladder.success) throw invalidInput('json', ladder.error);
      const update = policy === 'off' ? null : policy === 'default' || !ladder.success ? 'default' : ladder.data;
      return c.json({ retryPolicy: await setRetryPolicy(handle, update) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sessions/{id}/fork',
      tags: ['sessions'],
      summary: 'Start a new session from this one’s log, all of it or up to atSeq',
      security,
      request: { params: SessionParamsSchema, ...body(ForkBodySchema) },
      responses: { 201: json(SessionCreatedSchema, 'the new session'), ...errors(400, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { atSeq } = c.req.valid('json');
      const key = c.get('key');
      await ctx.authorizeSession(key, id);
      const fork = await forkSession(client, env, id, atSeq === undefined ? {} : { atSeq });
      // A fork runs as its source's agent: whoever may use the source may use the fork.
      const agent = await agentOrUnknown(ctx, id);
      ctx.rememberSession(fork.workflowId, agent ?? undefined);
      return c.json({ sessionId: fork.workflowId, runId: fork.firstExecutionRunId, uiUrl: link(fork.workflowId) }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sessions/{id}/end',
      tags: ['sessions'],
      summary: 'End the session once its running and queued turns have run',
      security,
      request: { params: SessionParamsSchema },
      responses: { 202: json(EndedSchema, 'the end, asked for'), ...errors(404, 409) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const requested = await requestEnd(await authorized(c.get('key'), id));
      return c.json({ ending: true as const, ...(requested.waitingFor ? { waitingFor: requested.waitingFor } : {}) }, 202);
    },
  );
};

/** The start options of a create body: its settings as given, the agent by name, the budget under the session's names. */
function startOptions(input: CreateSession): StartOptions {
  const { agent, budget, message: _message, ...settings } = input;
  return {
    ...(settings as Omit<StartOptions, 'agent'>),
    ...(agent === undefined ? {} : { agent }),
    ...(budget?.usd === undefined ? {} : { budgetUsd: budget.usd }),
    ...(budget?.tokens === undefined ? {} : { budgetTokens: budget.tokens }),
    ...(budget?.warn === undefined ? {} : { budgetWarn: budget.warn }),
  };
}

/** A session's agent (null: from settings), or undefined when it cannot be read now (then a limited key is not shown it). */
async function agentOrUnknown(ctx: GatewayContext, sessionId: string): Promise<string | null | undefined> {
  return ctx.sessionAgent(sessionId).catch(() => undefined);
}

/** Runs one task at a time per key (here a session id), the others queued behind it. */
function serializedPerSession() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(id: string, task: () => Promise<T>): Promise<T> => {
    const previous = tails.get(id) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    tails.set(id, tail);
    void tail.then(() => {
      if (tails.get(id) === tail) tails.delete(id);
    });
    return run;
  };
}
