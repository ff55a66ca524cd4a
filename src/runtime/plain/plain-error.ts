// The one error type the plain-workflow loader throws: a definition that cannot be loaded,
// with where (line, column; 1-based) and what (the field path, e.g. `steps[2].retry.base`).
// A ValidationError, so callers that already catch those (createEngine, the CLI) show it.
import { ValidationError } from '../../domain/errors.ts';

/** A plain workflow that cannot be loaded: `source:line:column: path: reason` in one line,
 *  each part also a field. A ValidationError. */
export class PlainWorkflowError extends ValidationError {
  static override readonly errorName: string = 'PlainWorkflowError';
  constructor(
    readonly source: string,
    readonly line: number,
    readonly column: number,
    readonly path: string,
    readonly reason: string,
  ) {
    // One line: `<source>:<line>:<col>: <path>: <reason>` (the path is left out at the root).
    super(`${source}:${line}:${column}: ${path ? `${path}: ` : ''}${reason}`);
  }
}
