/** Types of launch.js, for the TypeScript that imports it (scripts/build.ts, tests). */
export declare const STAMP: string;
export declare function launch(entry: string): Promise<void>;
export declare function entryToRun(entry: string, root?: string): string;
export declare function isFresh(root?: string): boolean;
