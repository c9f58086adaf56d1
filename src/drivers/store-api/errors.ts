// Errors the store throws on purpose. The service layer maps them (docs/api.md#errors):
// FilterError → 400 validation_error with `details`; VectorStoreError by its `code`.

export interface FilterIssue {
  /** Dotted path into the request, e.g. `filters.$or[1].price.gt`. */
  path: string;
  message: string;
}

/** A filter that breaks docs/vector-tables.md#filters or the collection's metadata schema; carries every issue found. */
export class FilterError extends Error {
  override readonly name = "FilterError";
  constructor(readonly details: FilterIssue[]) {
    super(details.length === 1 ? `invalid filter: ${details[0]!.message}` : `invalid filter (${details.length} problems)`);
  }
}

export type VectorStoreErrorCode =
  | "collection_not_found"
  | "collection_exists"
  | "generation_not_found"
  | "invalid_row"
  | "invalid_name"
  | "closed";

export class VectorStoreError extends Error {
  override readonly name = "VectorStoreError";
  constructor(
    readonly code: VectorStoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}
