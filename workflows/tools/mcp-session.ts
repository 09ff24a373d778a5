import { ActivityCancellationType, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';
import { MCP_ERROR_TYPES, TOOL_ERROR_TYPES } from '../../contracts/errors';
import { isCancellation, summarizeFailure } from '../failure';
import type { ToolCall } from '../../contracts/messages';
import type { NewSessionEvent, SessionEvent } from '../../contracts/session-log';
import { READ_ONLY_TOOL_RETRY, toolActivityOptions } from './activity-options';
import type { CustomSessionTools } from './custom-session';
import { latestMcpToolList, MCP_ARGUMENTS_MAX_CHARS, type McpActivities, type McpTool, type McpToolList } from '../../contracts/tools/mcp-tools';
import { prepareToolCall, type PreparedToolCall } from '../../contracts/tools/registry';
import type { AnyToolDefinition, ToolClass } from '../../contracts/tools/tool-definition';
import type { SubAgentActivities, SubAgentOffer } from '../../contracts/sub-agents';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { RecordedOffer } from './recorded-offer';

/** Past the server's own `timeoutMs` (which ends the request with an MCP cancellation), so that limit is the one that speaks. */
const ACTIVITY_MARGIN_MS = 10_000;
/** The MCP activities heartbeat every 2 s: a killed worker is noticed within this. */
const MCP_HEARTBEAT_MS = 10_000;

const listing = proxyActivities<McpActivities>({
  // Several servers, each with up to its `timeoutMs` to start and to list.
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: MCP_HEARTBEAT_MS,
  retry: { ...READ_ONLY_TOOL_RETRY, nonRetryableErrorTypes: [...READ_ONLY_TOOL_RETRY.nonRetryableErrorTypes, MCP_ERROR_TYPES.unknownServer, MCP_ERROR_TYPES.nameClash] },
});
const agentListing = proxyActivities<SubAgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { ...READ_ONLY_TOOL_RETRY, nonRetryableErrorTypes: [...READ_ONLY_TOOL_RETRY.nonRetryableErrorTypes, TOOL_ERROR_TYPES.unknownAgent] },
});
const calls = proxyActivities<McpActivities>({
  startToCloseTimeout: '1 minute',
  // The turn ends only once the server has been told to stop, as with the built-in tools.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/**
 * A session's MCP tools: listed once through an activity and recorded in the log
 * (`tools/listed`), then read from the log only, so replays, retries and forks offer and
 * dispatch exactly the recorded tools. Listing again happens only on `refreshTools`. The
 * event holds the session's custom tools too (`custom`, ./custom-session.ts), so they are
 * listed, recorded, carried and refreshed together: the newest list is the whole offer. So do
 * the session's sub-agents (`agents`, its `agents` field, ../sub-agents.ts).
 */
export class McpSessionTools {
  readonly #servers: readonly string[];
  readonly #custom: CustomSessionTools;
  readonly #events: () => readonly SessionEvent[];
  readonly #append: (event: NewSessionEvent) => void;
  readonly #agents: readonly string[];
  readonly #handoffs: readonly string[];
  /** A session handed a conversation lists its own tools before its first call, whatever list it was carried (../handoff.ts). */
  #mustList: boolean;
  readonly #recordedOffer = new RecordedOffer(() => latestMcpToolList(this.#events())?.tools, recordedTool);

  constructor(
    servers: readonly string[],
    custom: CustomSessionTools,
    events: () => readonly SessionEvent[],
    append: (event: NewSessionEvent) => void,
    agents: readonly string[] = [],
    { handoffs = [], mustList = false }: { handoffs?: readonly string[]; mustList?: boolean } = {},
  ) {
    this.#servers = servers;
    this.#custom = custom;
    this.#events = events;
    this.#append = append;
    this.#agents = agents;
    this.#handoffs = handoffs;
    this.#mustList = mustList;
  }

  get servers(): readonly string[] {
    return this.#servers;
  }

  /**
   * Lists the session's tools unless its log has their list or it uses no MCP server and no
   * custom tool: then there is no promise (no command), so a step awaits nothing for it.
   */
  listOnce(): Promise<void> | undefined {
    return this.#unlisted() ? this.refresh().then(() => undefined) : undefined;
  }

  /** Whether the session's input names any sub-agent or handoff. */
  get agentsOffered(): boolean {
    return this.#agents.length > 0 || this.#handoffs.length > 0;
  }

  /** Whether the session has anything to list: servers, custom tools, sub-agents or handoffs. */
  get offersTools(): boolean {
    return this.#servers.length > 0 || this.#custom.offered || this.agentsOffered;
  }

  /** The session has servers, custom tools or sub-agents, and no list of them is in the log yet. */
  #unlisted(): boolean {
    return this.offersTools && (this.#mustList || latestMcpToolList(this.#events()) === undefined);
  }

  /** Lists the servers' tools (and the custom ones) now and records the list; calls from here on use it. */
  async refresh(): Promise<McpToolList> {
    // A session with custom tools and no server lists no server; one with neither has always
    // listed the empty set on `refreshTools`, which its history records; sub-agents count as custom tools here.
    const list = this.#servers.length > 0 || !(this.#custom.offered || this.agentsOffered) ? await listed(listing.listMcpTools.executeWithOptions({ summary: `mcp tools of ${this.#servers.join(', ')}` }, [{ servers: [...this.#servers] }])) : { servers: [], tools: [] };
    const custom = this.#custom.offered ? await listed(this.#custom.list()) : undefined;
    const agents = this.agentsOffered ? await listed(this.#listAgents()) : undefined;
    const events = this.#events();
    // The last event naming a turn: a run that continued as new may hold no turn/start yet.
    const turn = [...events].reverse().find((e) => 'turn' in e)?.turn ?? 0;
    this.#append({ type: 'tools/listed', turn, ...list, ...(custom ? { custom } : {}), ...(agents ? { agents } : {}) });
    this.#mustList = false;
    return list;
  }

  /** The worker's offer of the named agents, to be recorded; a name it does not define fails the listing (`unknown_agent`). */
  #listAgents(): Promise<SubAgentOffer[]> {
    const handoffs = this.#handoffs.length > 0 ? { handoffs: [...this.#handoffs] } : {};
    return agentListing.listSubAgents.executeWithOptions({ summary: `agents ${[...this.#agents, ...this.#handoffs].join(', ')}` }, [{ names: [...this.#agents], ...handoffs }]);
  }

  /** The recorded tools as tool definitions, classified like the built-in ones; their arguments are only checked to be a bounded object. */
  definitions(): AnyToolDefinition[] {
    return this.#recordedOffer.definitions();
  }

  owns(name: string): boolean {
    return this.#recordedOffer.owns(name);
  }

  /**
   * Whether a call of one of these tools is dispatched, as `prepareToolCall` decides it for a
   * built-in one. The workflow never compiles or runs a schema a server listed: a
   * backtracking `pattern` ran past the isolate's 5 s limit and took the worker process down,
   * and a `$ref` to itself threw outside any catch. It checks only that the arguments are a
   * JSON object of bounded size; the call's activity checks them against the schema, with a
   * bounded checker (activities/mcp/check-arguments.ts).
   */
  prepare(call: ToolCall): PreparedToolCall {
    const entry = this.#recorded().get(call.name);
    if (!entry) throw new Error(`MCP tool ${call.name} is not among the recorded tools`);
    return prepareToolCall(call, [entry.definition]);
  }

  dispatch(step: number, call: ToolCall, toolClass: ToolClass): Promise<ToolOutcome> {
    const entry = this.#recorded().get(call.name);
    if (!entry) throw new Error(`MCP tool ${call.name} vanished between preparation and dispatch`);
    const { tool, definition } = entry;
    return calls.callMcpTool.executeWithOptions(
      { ...toolActivityOptions(definition, toolClass), summary: `step ${step} · mcp ${tool.server}/${tool.tool} #${call.id}` },
      [{ server: tool.server, tool: tool.tool, arguments: call.input, callId: call.id, lane: toolClass }],
    );
  }

  #recorded(): Map<string, RecordedTool> {
    return this.#recordedOffer.byName();
  }
}

/** A listing's failure as its own line (`mcp_unavailable: MCP server "x" …`, `unknown_custom_tool: …`), also for a refreshTools caller. */
function listed<T>(listing: Promise<T>): Promise<T> {
  return listing.catch((error: unknown) => {
    if (isCancellation(error)) throw error;
    const { type, message } = summarizeFailure(error);
    throw ApplicationFailure.create({ type, message, nonRetryable: true });
  });
}

interface RecordedTool {
  tool: McpTool;
  definition: AnyToolDefinition;
}

/** A JSON object of bounded size: all the workflow asks of an MCP or a custom tool call's arguments. */
export const BoundedArguments = z.record(z.string(), z.unknown()).refine((args) => jsonChars(args) <= MCP_ARGUMENTS_MAX_CHARS, {
  error: `the arguments are more than ${MCP_ARGUMENTS_MAX_CHARS} characters of JSON; send less`,
});

function jsonChars(value: unknown): number {
  try {
    return JSON.stringify(value).length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function recordedTool(tool: McpTool): RecordedTool {
  const definition: AnyToolDefinition = {
    name: tool.name,
    description: tool.description,
    input: BoundedArguments,
    classify: () => tool.lane,
    timeouts: { startToCloseMs: tool.timeoutMs + ACTIVITY_MARGIN_MS, heartbeatMs: MCP_HEARTBEAT_MS },
  };
  return { tool, definition };
}
