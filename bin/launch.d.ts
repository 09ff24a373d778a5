/** Types of launch.js, for the TypeScript that imports it (scripts/build.ts). */
export declare const STAMP: string;
export declare function isFresh(): boolean;
export declare function launch(entry: string): Promise<void>;
