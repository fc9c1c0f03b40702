// Types of scripts/test-fast.mjs (a plain script, so that `npm run test:fast` starts without a TypeScript loader).
export declare const SPAWNS: RegExp;
export declare function testFiles(dir?: string): string[];
export declare function fastFiles(): string[];
export declare function groups(files: readonly string[], n: number, sizeOf?: (f: string) => number): string[][];
export declare function entryText(files: readonly string[]): string;
