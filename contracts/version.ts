/**
 * The release, as package.json has it (test/version.test.ts holds them equal): what the
 * worker tells an MCP server it is, without reading package.json at run time, which the
 * compiled code in dist/ does not sit beside.
 */
export const VERSION = '0.2.0';
