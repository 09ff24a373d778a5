import { readFileSync } from 'node:fs';
import { OutputSchemaSchema, type OutputSchema } from '../contracts/structured-output';
import { ConfigError } from '../config/config-error';

/**
 * A JSON Schema file named on the command line (`--output-schema FILE` of start, run and
 * send), checked here as the session checks its input: a file that cannot be read, is not
 * JSON, or is not an object schema is refused in one line naming the flag and the file,
 * before anything reaches the server.
 */
export function readOutputSchemaFile(flag: string, path: string): OutputSchema {
  const file = JSON.stringify(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // Node's message is `ENOENT: no such file or directory, open 'x'`: the part before the path is the reason.
    const reason = (error instanceof Error ? error.message : String(error)).split(',')[0];
    throw new ConfigError(`${flag} cannot read ${file}: ${reason}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // Only the position: the engine's message may quote the file's text, and its wording differs between Node versions.
    const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
    throw new ConfigError(`${flag} ${file} is not JSON${position === undefined ? '' : ` (at position ${position})`}`);
  }
  const schema = OutputSchemaSchema.safeParse(json);
  if (!schema.success) throw new ConfigError(`${flag} ${file}: ${schema.error.issues[0]?.message ?? 'not a JSON Schema'}`);
  return schema.data;
}
