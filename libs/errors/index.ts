import { type AppError, isAppError } from './app-error.js';
import { errors } from './catalogue.js';

export { AppError, isAppError, printableDetail, type ErrorBody } from './app-error.js';
export { errors, catalogue, type CatalogueEntry } from './catalogue.js';

/** Turns anything thrown into an AppError; unknown errors become a generic 500 without leaking internals. */
export function toAppError(value: unknown): AppError {
  if (isAppError(value)) return value;
  return errors.internal();
}
