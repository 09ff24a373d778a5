import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error';

/**
 * A JSON file a setting names, read once: a file that cannot be read or is not JSON is one
 * ConfigError naming the setting and the path. The parser's own message is left out: it
 * quotes the text, and a configuration file may hold a key.
 */
export function readJsonFile(setting: string, path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${setting}: cannot read ${JSON.stringify(path)}: ${(error instanceof Error ? error.message : String(error)).split(',')[0]}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ConfigError(`${setting}: ${JSON.stringify(path)} is not JSON`);
  }
}
