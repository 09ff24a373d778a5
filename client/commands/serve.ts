import { parseCommandArgs, parseWholeNumber, type Command } from './command';

export const serveCommand: Command = {
  name: 'serve',
  followsLive: true,
  synopsis: 'serve [--port N] [--host HOST]',
  summary:
    'Runs the HTTP gateway (docs/gateway.md) in front of this client: the session API, its event stream, the OpenAI-compatible endpoint and the chat page, ' +
    'behind the bearer keys of AGENT_GATEWAY_KEYS_FILE (make one with keys new). Listens on AGENT_GATEWAY_HOST:AGENT_GATEWAY_PORT (127.0.0.1:8787), or --host and --port; ' +
    'CORS origins from AGENT_GATEWAY_CORS_ORIGINS, the live stream from AGENT_LIVE_STREAM (embedded). Logs one line a request (never a key); Ctrl-C stops it.',
  async run(argv, { signal }) {
    const { values } = parseCommandArgs(this, argv, { port: { type: 'string' }, host: { type: 'string' } }, []);
    const port = values.port === undefined ? undefined : parseWholeNumber('--port', values.port, 0, 65_535);
    // Loaded only here: the gateway's HTTP stack would slow every other command's start.
    const { runGateway } = await import('../../gateway/serve');
    await runGateway(process.env, { signal, log: (line) => console.log(line), ...(port === undefined ? {} : { port }), ...(values.host === undefined ? {} : { host: values.host }) });
    return 130;
  },
};
