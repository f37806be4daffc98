import { ApiError } from "../http/errors.js";
import type { Db } from "../db.js";

/**
 * Documents under legal hold are frozen until compliance lifts the hold by
 * hand; writes are refused outright.
 */
export async function assertNotOnHold(db: Db, documentId: string): Promise<void> {
  const row = await db.oneOrNone("select hold_id from legal_holds where document_id = $1 and lifted_at is null", [documentId]);
  if (row) {
    throw new ApiError(423, "DOCUMENT_LOCKED", `document is under legal hold ${row.hold_id}`);
  }
}
