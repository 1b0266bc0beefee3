/** Where the offline commands print: standard output for results, standard error for problems. */
export interface Out {
  log(line: string): void;
  error(line: string): void;
}

/** The console. */
export const consoleOut: Out = { log: (l) => console.log(l), error: (l) => console.error(l) };
